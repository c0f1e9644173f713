"""What a handler hands back to the ASGI layer: a JSON body or a list of SSE events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from evaljig_gateway._work import Work

JSON = b"application/json"
SSE = b"text/event-stream; charset=utf-8"
#: List items serialized between two yields by ``dumps_work`` (about a millisecond of log-prob entries).
DUMP_STEP = 512


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


def dumps_work(value: Any) -> Work[bytes]:
    """``orjson.dumps(value)`` byte for byte, yielding after every ``DUMP_STEP`` items of a long list.

    One choice of an echoed prompt with log-probs holds four lists as long as the prompt (a
    quarter of a million tokens at ``--max-echo-tokens``), which orjson would write in one
    100 ms call; written a slice at a time, it never holds the event loop.
    """
    if not _holds_long_list(value):  # a short answer: one orjson call
        return orjson.dumps(value)
    out: list[bytes] = []
    yield from _dump_into(value, out)
    return b"".join(out)


def _holds_long_list(value: Any) -> bool:
    """Whether a list longer than ``DUMP_STEP`` is anywhere inside ``value`` (dicts and lists walked)."""
    if isinstance(value, dict):
        return any(isinstance(v, (dict, list)) and _holds_long_list(v) for v in value.values())
    if isinstance(value, list):
        return len(value) > DUMP_STEP or any(isinstance(v, (dict, list)) and _holds_long_list(v) for v in value)
    return False


def dumps_each_work(items: list[dict[str, Any]]) -> Work[list[bytes]]:
    """Each of ``items`` (a response's choices) as JSON, a step at least per item."""
    parts = []
    for item in items:
        parts.append((yield from dumps_work(item)))
        yield
    return parts


def _dump_into(value: Any, out: list[bytes]) -> Work[None]:
    if isinstance(value, dict):
        out.append(b"{")
        for i, (key, item) in enumerate(value.items()):
            out.append(b"," + orjson.dumps(key) + b":" if i else orjson.dumps(key) + b":")
            yield from _dump_into(item, out)
        out.append(b"}")
    elif isinstance(value, list) and (len(value) > DUMP_STEP or any(isinstance(v, (dict, list)) for v in value)):
        out.append(b"[")
        for start in range(0, len(value), DUMP_STEP):
            chunk = value[start : start + DUMP_STEP]
            if start:
                out.append(b",")
            if any(isinstance(v, (dict, list)) and len(v) > DUMP_STEP for v in chunk):
                for i, item in enumerate(chunk):  # a long list inside: step through it too
                    if i:
                        out.append(b",")
                    yield from _dump_into(item, out)
            else:
                out.append(orjson.dumps(chunk)[1:-1])
            yield
        out.append(b"]")
    else:
        out.append(orjson.dumps(value))


def sse_reply_work(events: list[Any], done: bool = True) -> Work[Reply]:
    """Server-sent events, one ``data:`` line each, closed by ``[DONE]`` when ``done``.

    Serialized one event per step: a streamed echo of a big prompt is many events.
    """
    chunks: list[bytes] = []
    for event in events:
        chunks.append(b"data: " + (yield from dumps_work(event)) + b"\n\n")
        yield
    if done:
        chunks.append(b"data: [DONE]\n\n")
    return Reply(200, b"", content_type=SSE, events=chunks)
