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
#: A big JSON body is kept and sent as pieces of about this size, never copied into one long bytes.
CHUNK_BYTES = 64 * 1024


@dataclass(slots=True)
class Reply:
    status: int
    body: bytes
    content_type: bytes = JSON
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    events: list[bytes] | None = None
    """For streaming replies: each item is sent as its own chunk."""
    chunks: list[bytes] | None = None
    """A big JSON body in pieces (``body`` is then empty): sent one after the other under one
    ``content-length``, so no step copies megabytes into one bytes object while others wait."""

    @property
    def content(self) -> bytes:
        """The whole body (joined: for tests and behaviours, not the serving path)."""
        if self.chunks is not None:
            return b"".join(self.chunks)
        return self.body or b"".join(self.events or [])


def json_reply(payload: Any, status: int = 200) -> Reply:
    return Reply(status, orjson.dumps(payload))


class Chunks:
    """Bytes appended piece by piece, joined into chunks of about ``CHUNK_BYTES``: each join is short."""

    __slots__ = ("_pending", "_size", "chunks")

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self._pending: list[bytes] = []
        self._size = 0

    def append(self, data: bytes) -> None:
        self._pending.append(data)
        self._size += len(data)
        if self._size >= CHUNK_BYTES:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self.chunks.append(self._pending[0] if len(self._pending) == 1 else b"".join(self._pending))
            self._pending, self._size = [], 0

    def done(self) -> list[bytes]:
        self._flush()
        return self.chunks


class ArrayBody:
    """``orjson.dumps({**head, key: [item, ...], **tail})`` byte for byte, written an item at a time.

    Items are serialized as they are made (their objects can go at once). A small answer is
    joined once, as before; past ``CHUNK_BYTES`` the body goes into ``Chunks``, so a big answer
    is neither one long dump nor one long copy that holds the event loop.
    """

    __slots__ = ("_head", "_items", "_key", "_out", "_size", "_written")

    def __init__(self, head: dict[str, Any], key: str) -> None:
        self._head, self._key = head, key
        self._items: list[bytes] = []
        self._size = 0
        self._out: Chunks | None = None
        self._written = 0  # items already in ``_out``

    def add(self, encoded: bytes) -> None:
        """An item already serialized (every request's path: kept lean)."""
        self._items.append(encoded)
        self._size += len(encoded)
        if self._size >= CHUNK_BYTES:
            self._spill()

    def add_work(self, item: Any) -> Work[None]:
        """An item, serialized a step at a time when it holds long lists (see ``dumps_work``)."""
        if not _holds_long_list(item):
            self.add(orjson.dumps(item))
            return
        out = self._spill()
        if self._written:
            out.append(b",")
        self._written += 1
        yield from _dump_into(item, out)

    def _spill(self) -> Chunks:
        """Move the items gathered so far into ``_out`` (opened on first use)."""
        out = self._out
        if out is None:
            out = self._out = Chunks()
            out.append(_opening(self._head, self._key))
        for encoded in self._items:
            if self._written:
                out.append(b",")
            out.append(encoded)
            self._written += 1
        self._items, self._size = [], 0
        return out

    def reply(self, tail: dict[str, Any]) -> Reply:
        """The finished body as a 200: one bytes when small, else in chunks of about ``CHUNK_BYTES``."""
        closing = [b"]"]
        for name, value in tail.items():
            closing += [b",", orjson.dumps(name), b":", orjson.dumps(value)]
        closing.append(b"}")
        if self._out is None:
            return Reply(200, b"".join([_opening(self._head, self._key), b",".join(self._items), *closing]))
        out = self._spill()
        out.append(b"".join(closing))
        return Reply(200, b"", chunks=out.done())


def _opening(head: dict[str, Any], key: str) -> bytes:
    """``{...head..., "key":[`` as orjson writes it."""
    return (orjson.dumps(head)[:-1] + b"," if head else b"{") + orjson.dumps(key) + b":["


def dumps_work(value: Any) -> Work[bytes]:
    """``orjson.dumps(value)`` byte for byte, yielding after every ``DUMP_STEP`` items of a long list.

    One choice of an echoed prompt with log-probs holds four lists as long as the prompt (a
    quarter of a million tokens at ``--max-echo-tokens``), which orjson would write in one
    100 ms call; written a slice at a time, it never holds the event loop.
    """
    if not _holds_long_list(value):  # a short answer: one orjson call
        return orjson.dumps(value)
    out = Chunks()
    yield from _dump_into(value, out)
    return b"".join(out.done())


def _holds_long_list(value: Any) -> bool:
    """Whether a list longer than ``DUMP_STEP`` is anywhere inside ``value`` (dicts and lists walked)."""
    if isinstance(value, Joined):
        return True
    if isinstance(value, dict):
        return any(isinstance(v, (dict, list, Joined)) and _holds_long_list(v) for v in value.values())
    if isinstance(value, list):
        return len(value) > DUMP_STEP or any(isinstance(v, (dict, list, Joined)) and _holds_long_list(v) for v in value)
    return False


class Joined:
    """Lists written as one JSON array without being concatenated first (an echo's prompt and completion
    log-probs: a quarter of a million entries each, which ``+`` would copy in one step)."""

    __slots__ = ("parts",)

    def __init__(self, *parts: list[Any]) -> None:
        self.parts = parts

    def __len__(self) -> int:
        return sum(len(part) for part in self.parts)

    def __eq__(self, other: object) -> bool:
        """Equal to the concatenated list (and to another ``Joined`` of the same items)."""
        if isinstance(other, Joined):
            other = [item for part in other.parts for item in part]
        return isinstance(other, list) and [item for part in self.parts for item in part] == other

    __hash__ = None  # type: ignore[assignment]  # mutable contents, like a list


def _dump_into(value: Any, out: Chunks) -> Work[None]:
    if isinstance(value, Joined):
        out.append(b"[")
        first = True
        for part in value.parts:
            if part:
                if not first:
                    out.append(b",")
                first = False
                yield from _dump_items(part, out)
        out.append(b"]")
    elif isinstance(value, dict):
        out.append(b"{")
        for i, (key, item) in enumerate(value.items()):
            out.append(b"," + orjson.dumps(key) + b":" if i else orjson.dumps(key) + b":")
            yield from _dump_into(item, out)
        out.append(b"}")
    elif isinstance(value, list) and (len(value) > DUMP_STEP or any(isinstance(v, (dict, list)) for v in value)):
        out.append(b"[")
        yield from _dump_items(value, out)
        out.append(b"]")
    else:
        out.append(orjson.dumps(value))


def _dump_items(value: list[Any], out: Chunks) -> Work[None]:
    """A list's items, comma-separated without the brackets, a step per ``DUMP_STEP`` of them."""
    for start in range(0, len(value), DUMP_STEP):
        chunk = value[start : start + DUMP_STEP]
        if start:
            out.append(b",")
        if any(isinstance(v, (dict, list, Joined)) and _holds_long_list(v) for v in chunk):
            for i, item in enumerate(chunk):  # a long list inside: step through it too
                if i:
                    out.append(b",")
                yield from _dump_into(item, out)
        else:
            out.append(orjson.dumps(chunk)[1:-1])
        yield


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
