"""What a handler hands back to the ASGI layer: a JSON body or a list of SSE events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

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

    @property
    def content(self) -> bytes:
        """The whole body (joined: for tests and behaviours, not the serving path)."""
        return self.body or b"".join(self.events or [])


def json_reply(payload: Any, status: int = 200) -> Reply:
    return Reply(status, orjson.dumps(payload))


def sse_reply(events: list[Any], done: bool = True) -> Reply:
    """Server-sent events, one ``data:`` line each, closed by ``[DONE]`` when ``done``."""
    chunks = [b"data: " + orjson.dumps(event) + b"\n\n" for event in events]
    if done:
        chunks.append(b"data: [DONE]\n\n")
    return Reply(200, b"", content_type=SSE, events=chunks)
