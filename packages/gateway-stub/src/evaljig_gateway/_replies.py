"""What a handler hands back to the ASGI layer: a JSON body or a list of SSE events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from evaljig_gateway._work import Work

JSON = b"application/json"
SSE = b"text/event-stream; charset=utf-8"


@dataclass(slots=True)
class Reply:
    status: int
    body: bytes
    content_type: bytes = JSON
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    events: list[bytes] | None = None
    """For streaming replies: each item is sent as its own chunk."""


def json_reply(payload: Any, status: int = 200) -> Reply:
    return Reply(status, orjson.dumps(payload))


def assembled_json(head: dict[str, Any], key: str, items: list[bytes], tail: dict[str, Any]) -> bytes:
    """``orjson.dumps({**head, key: [...], **tail})`` byte for byte, from items serialized one at a time.

    A big answer is then never one long dump that holds the event loop.
    """
    opening = orjson.dumps(head)[:-1] + b"," if head else b"{"
    out = [opening, orjson.dumps(key), b":[", b",".join(items), b"]"]
    for name, value in tail.items():
        out += [b",", orjson.dumps(name), b":", orjson.dumps(value)]
    out.append(b"}")
    return b"".join(out)


def sse_reply_work(events: list[Any], done: bool = True) -> Work[Reply]:
    """Server-sent events, one ``data:`` line each, closed by ``[DONE]`` when ``done``.

    Serialized one event per step: a streamed echo of a big prompt is many events.
    """
    chunks: list[bytes] = []
    for event in events:
        chunks.append(b"data: " + orjson.dumps(event) + b"\n\n")
        yield
    if done:
        chunks.append(b"data: [DONE]\n\n")
    return Reply(200, b"", content_type=SSE, events=chunks)
