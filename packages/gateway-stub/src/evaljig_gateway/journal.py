"""A bounded, thread-safe record of every request the gateway answered.

Appending is one locked ``deque.append`` on the hot path; bodies are kept as bytes and
parsed only when someone reads them. The optional JSONL sink is written in batches by a
background thread so file I/O never sits between a request and its response.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

DEFAULT_CAPACITY = 10_000


@dataclass(frozen=True, slots=True)
class Call:
    """One answered request."""

    seq: int
    method: str
    path: str
    model: str | None
    status: int
    attempt: int
    """1-based count of valid calls for this model name on this gateway; 0 when there is no model or the
    request was rejected before it counted (bad JSON, a field answered with 400)."""
    raw_body: bytes

    @property
    def body(self) -> Any:
        """The request body as JSON, or as text when it was not valid JSON."""
        try:
            return orjson.loads(self.raw_body) if self.raw_body else None
        except orjson.JSONDecodeError:
            return self.raw_body.decode("utf-8", errors="replace")

    def as_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "method": self.method,
            "path": self.path,
            "model": self.model,
            "status": self.status,
            "attempt": self.attempt,
            "body": self.body,
        }


def call_json(call: Call) -> bytes:
    """One call as JSON; a body nested deeper than orjson writes (255 levels) is given as its text."""
    data = call.as_dict()
    try:
        return orjson.dumps(data)
    except orjson.JSONEncodeError:
        data["body"] = call.raw_body.decode("utf-8", errors="replace")
        return orjson.dumps(data)


class Journal:
    """The last ``capacity`` calls plus per-model attempt counters."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, sink: Path | None = None) -> None:
        if capacity < 1:
            raise ValueError(f"journal capacity must be at least 1, got {capacity}")
        self._calls: deque[Call] = deque(maxlen=capacity)
        self._attempts: Counter[str] = Counter()
        self._seq = 0
        self._lock = threading.Lock()
        self._sink = _JsonlSink(sink) if sink is not None else None

    def next_attempt(self, model: str) -> int:
        with self._lock:
            self._attempts[model] += 1
            return self._attempts[model]

    def record(self, method: str, path: str, model: str | None, status: int, attempt: int, raw_body: bytes) -> None:
        with self._lock:
            self._seq += 1
            call = Call(self._seq, method, path, model, status, attempt, raw_body)
            self._calls.append(call)
        if self._sink is not None:
            self._sink.put(call)

    def calls(self, model: str | None = None, path: str | None = None) -> list[Call]:
        with self._lock:
            snapshot = list(self._calls)
        return [c for c in snapshot if (model is None or c.model == model) and (path is None or c.path == path)]

    def reset(self) -> None:
        """Forget calls, sequence numbers and attempt counters (``fail-once`` fails again)."""
        with self._lock:
            self._seq = 0
            self._calls.clear()
            self._attempts.clear()

    def close(self) -> None:
        if self._sink is not None:
            self._sink.close()


class _JsonlSink:
    """Appends calls to a JSONL file from a background thread, in batches."""

    def __init__(self, path: Path) -> None:
        self._path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("ab")
        self._pending: list[Call] = []
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="gateway-journal", daemon=True)
        self._thread.start()

    def put(self, call: Call) -> None:
        with self._cond:
            self._pending.append(call)
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closed:
                    self._cond.wait()
                batch, self._pending = self._pending, []
                closed = self._closed
            if batch:
                self._file.write(b"".join(call_json(c) + b"\n" for c in batch))
                self._file.flush()
            if closed and not batch:
                return

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()
        self._file.close()
