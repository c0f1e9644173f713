"""The ASGI side of an answer: the ASGI callables' types, and what a handler hands back (a JSON body or SSE events)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import orjson

JSON = b"application/json"
SSE = b"text/event-stream; charset=utf-8"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


async def until_disconnect(receive: Receive) -> None:
    """Return once the client has gone (what a held or forwarded request waits for beside its work)."""
    while (await receive())["type"] != "http.disconnect":
        pass


@dataclass(slots=True)
class Reply:
    status: int
    body: bytes
    content_type: bytes = JSON
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    events: list[bytes] | None = None
    """For streaming replies: each item is sent as its own chunk."""
    tokens: int = 0
    """Prompt plus completion tokens the reply spends (``tpm-<n>`` counts them; 0 when unknown)."""
    end: str = "whole"
    """How the body ends: ``whole``; ``cut`` (cleanly, short of its end: journaled cut); ``drop`` (the
    connection is closed after the body sent so far, without ending it)."""

    @property
    def content(self) -> bytes:
        """The whole body (joined: for tests and behaviours, not the serving path)."""
        return self.body or b"".join(self.events or [])


def json_reply(payload: Any, status: int = 200, *, tokens: int = 0) -> Reply:
    return Reply(status, orjson.dumps(payload), tokens=tokens)


def sse_reply(events: list[Any], *, tokens: int = 0) -> Reply:
    """Server-sent events, one ``data:`` line each, closed by ``[DONE]``."""
    chunks = [b"data: " + orjson.dumps(event) + b"\n\n" for event in events]
    chunks.append(b"data: [DONE]\n\n")
    return Reply(200, b"", content_type=SSE, events=chunks, tokens=tokens)
