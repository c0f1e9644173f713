"""A bounded, thread-safe record of every request the gateway answered.

Appending is one locked ``deque.append`` of a tuple on the hot path; ``Call`` objects are made,
and bodies parsed, only when someone reads them. The journal is bounded twice: by calls and by bytes,
oldest first, and a body longer than ``body_bytes`` is kept truncated with its real size,
so hostile traffic cannot grow the server without limit. The per-model attempt counters are
bounded too: they track the ``max_models`` most recently called model names, and a name not
called since that many others were starts counting again. The optional JSONL sink is written
in batches by a background thread so file I/O never sits between a request and its response.

Every entry is timed (when its request arrived and when its answer was ready, on the monotonic
clock, plus the wall-clock time it arrived) so ``_verdict`` can judge how a client retried. The
times are in the JSON the gateway serves and writes (``call_json``), not in ``Call.as_dict()``:
what tests and failure bundles compare byte for byte stays the same run after run.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

DEFAULT_CAPACITY = 10_000
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_BODY_BYTES = 256 * 1024
#: Distinct model names whose attempts are counted; the least recently called name is forgotten first.
DEFAULT_MAX_MODELS = 10_000
#: What one entry costs besides its body (the object, its strings, the deque slot), roughly.
ENTRY_OVERHEAD = 256


#: What the verdict reads of a call besides status and body: the times, the asked wait, a cut answer.
_TIMING = ("started_ns", "ended_ns", "wall_time", "retry_after_ms", "cut")


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
    """The request body, or its first ``body_bytes`` bytes when it was longer (see ``body_size``)."""
    body_size: int = -1
    """The size of the body as received; -1 means ``len(raw_body)`` (nothing was cut)."""
    miss: str | None = None
    """For a request a replayed cassette lacks: the miss explanation (the 404's message, whose first line
    names the closest recording and the first differing field)."""
    started_ns: int = 0
    """``time.monotonic_ns()`` when the request arrived (0: not timed, e.g. a journal built by hand)."""
    ended_ns: int = 0
    """``time.monotonic_ns()`` when its answer was ready to send (it is journaled before it is sent)."""
    wall_time: float = 0.0
    """Unix time (``time.time()``) when the request arrived: for people; order and gaps use the monotonic pair."""
    retry_after_ms: int | None = None
    """The wait the answer asked for (its ``retry-after-ms``, else ``retry-after`` seconds), if it asked."""
    cut: bool = False
    """The gateway cut the answer short on purpose (a stream ended early): a client must not take it as whole."""
    error_code: str | None = None
    """An error answer's OpenAI ``error.code`` (``context_length_exceeded``, ``rate_limit_exceeded``...), if it
    had one: what a client that logs nothing (lighteval retrying a 400) was told."""

    @property
    def size(self) -> int:
        """Bytes the client sent as the body."""
        return self.body_size if self.body_size >= 0 else len(self.raw_body)

    @property
    def truncated(self) -> bool:
        return self.size > len(self.raw_body)

    @property
    def body(self) -> Any:
        """The request body as JSON, or as text when it was not valid JSON (or was truncated)."""
        if self.raw_body and not self.truncated:
            with contextlib.suppress(orjson.JSONDecodeError):
                return orjson.loads(self.raw_body)
        return self.raw_body.decode("utf-8", errors="replace") if self.raw_body else None

    def as_dict(self, *, timed: bool = False) -> dict[str, Any]:
        """The entry as JSON-ready data; ``timed`` adds the clock readings (which differ on every run)."""
        return {
            "seq": self.seq,
            "method": self.method,
            "path": self.path,
            "model": self.model,
            "status": self.status,
            "attempt": self.attempt,
            "body": self.body,
            "body_size": self.size,
            "body_truncated": self.truncated,
            **({"miss": self.miss} if self.miss is not None else {}),
            **({"error_code": self.error_code} if self.error_code is not None else {}),
            **({name: getattr(self, name) for name in _TIMING} if timed else {}),
        }


def call_json(call: Call) -> bytes:
    """One call as JSON, timed; a body nested deeper than orjson writes (255 levels) is given as its text."""
    data = call.as_dict(timed=True)
    try:
        return orjson.dumps(data)
    except orjson.JSONEncodeError:
        data["body"] = call.raw_body.decode("utf-8", errors="replace")
        return orjson.dumps(data)


def retry_after_of(headers: Sequence[tuple[bytes, bytes]]) -> int | None:
    """The wait an answer's headers ask for, in ms: ``retry-after-ms``, else ``retry-after`` in whole seconds."""
    asked = dict(headers)  # the last of a name counts
    millis = asked.get(b"retry-after-ms", b"")
    if millis.isdigit():
        return int(millis)
    seconds = asked.get(b"retry-after", b"")
    return int(seconds) * 1000 if seconds.isdigit() else None


#: What the journal keeps of a call: ``Call``'s fields in order, then what the entry costs (``ENTRY_OVERHEAD``
#: plus its strings). A tuple costs a tenth of a frozen dataclass to make; readers get ``Call(*entry[:-1])``.
_Entry = tuple[
    int, str, str, str | None, int, int, bytes, int, str | None, int, int, float, int | None, bool, str | None, int
]


class Journal:
    """The newest calls (at most ``capacity`` of them and ``max_bytes`` in all) plus per-model attempt counters
    (for at most ``max_models`` names, least recently called forgotten first)."""

    def __init__(
        self,
        capacity: int = DEFAULT_CAPACITY,
        sink: Path | None = None,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        body_bytes: int = DEFAULT_BODY_BYTES,
        max_models: int = DEFAULT_MAX_MODELS,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"journal capacity must be at least 1, got {capacity}")
        if max_bytes < ENTRY_OVERHEAD:
            raise ValueError(f"journal max bytes must be at least {ENTRY_OVERHEAD}, got {max_bytes}")
        if body_bytes < 0:
            raise ValueError(f"journal body bytes must be at least 0, got {body_bytes}")
        if max_models < 1:
            raise ValueError(f"journal max models must be at least 1, got {max_models}")
        self.capacity, self.max_bytes, self.body_bytes = capacity, max_bytes, body_bytes
        self.max_models = max_models
        self._calls: deque[_Entry] = deque()
        self._attempts: OrderedDict[str, int] = OrderedDict()
        self._seq = self._epoch = self._bytes = self._dropped = self._served = self._models_forgotten = 0
        self._lock = threading.Lock()
        self._sink = _JsonlSink(sink) if sink is not None else None

    @property
    def epoch(self) -> int:
        """Which reset this is; a request remembers it on arrival, so one from before a reset stays out."""
        return self._epoch

    def next_attempt(self, model: str, epoch: int | None = None) -> int:
        """The attempt number of ``model``'s next call; a call from before the last reset counts for nothing (0).

        Past ``max_models`` distinct names the least recently called one is forgotten: its next call is 1 again.
        """
        with self._lock:
            if epoch is not None and epoch != self._epoch:
                return 0
            attempt = self._attempts.pop(model, 0) + 1
            self._attempts[model] = attempt  # (re)inserted last: the most recently called
            if len(self._attempts) > self.max_models:
                self._attempts.popitem(last=False)
                self._models_forgotten += 1
            return attempt

    def record(
        self,
        method: str,
        path: str,
        model: str | None,
        status: int,
        attempt: int,
        raw_body: bytes,
        epoch: int | None = None,
        *,
        miss: str | None = None,
        started_ns: int | None = None,
        reply_headers: Sequence[tuple[bytes, bytes]] = (),
        cut: bool = False,
        error_code: str | None = None,
    ) -> None:
        """Journal a finished call; one that arrived before the last reset is counted as served only.

        ``started_ns`` is when the request arrived (``time.monotonic_ns()``; default: now); the call
        ends now. ``reply_headers`` are the answer's, read for the wait it asked for.
        """
        ended = time.monotonic_ns()
        started = ended if started_ns is None else min(started_ns, ended)
        wall = time.time() - (ended - started) / 1e9
        retry_after = retry_after_of(reply_headers) if reply_headers else None
        kept = raw_body[: self.body_bytes]  # the body itself (no copy) when it is not longer
        cost = ENTRY_OVERHEAD + len(kept) + len(path) + len(model or "") + len(miss or "")
        with self._lock:
            self._served += 1
            if epoch is not None and epoch != self._epoch:
                return  # a test's leftover (say, a request its client gave up on) is not the next test's call
            self._seq += 1
            entry = (self._seq, method, path, model, status, attempt, kept, len(raw_body), miss, started, ended, wall,
                     retry_after, cut, error_code, cost)  # fmt: skip
            self._calls.append(entry)
            self._bytes += cost
            while len(self._calls) > self.capacity or (self._bytes > self.max_bytes and len(self._calls) > 1):
                self._bytes -= self._calls.popleft()[-1]
                self._dropped += 1
        if self._sink is not None:
            self._sink.put(entry)

    def calls(self, model: str | None = None, path: str | None = None, limit: int | None = None) -> list[Call]:
        """Calls oldest first, optionally for one model and/or path; ``limit`` keeps the newest ``limit``."""
        with self._lock:
            snapshot = list(self._calls)
        found = [e for e in snapshot if (model is None or e[3] == model) and (path is None or e[2] == path)]
        return [Call(*e[:-1]) for e in (found[-limit:] if limit is not None else found)]

    @property
    def dropped(self) -> int:
        """Calls pushed out (oldest first) by the count or byte bound since the last reset."""
        return self._dropped

    @property
    def served(self) -> int:
        """Every call recorded since the journal was made (journaled or, from before a reset, not);
        ``reset`` does not clear it. The gateway's own ``/_gateway/*`` calls are never recorded."""
        return self._served

    def stats(self) -> dict[str, int]:
        """Counters for ``GET /_gateway/status``."""
        with self._lock:
            return {
                "served": self._served,
                "journal_calls": len(self._calls),
                "journal_bytes": self._bytes,
                "journal_max_bytes": self.max_bytes,
                "dropped": self._dropped,
                "models": len(self._attempts),
                "models_forgotten": self._models_forgotten,
            }

    def reset(self) -> None:
        """Forget calls, sequence numbers, drops and attempt counters (``fail-once`` fails again).

        Requests still in flight are left out of the new journal and its attempt counts.
        """
        with self._lock:
            self._seq = self._bytes = self._dropped = self._models_forgotten = 0
            self._epoch += 1
            self._calls.clear()
            self._attempts.clear()

    def close(self) -> None:
        if self._sink is not None:
            self._sink.close()


class _JsonlSink:
    """Appends calls to a JSONL file from a background thread, in batches (what queued up while it wrote)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("ab")
        self._queue: queue.SimpleQueue[_Entry | None] = queue.SimpleQueue()  # None: write what came before, stop
        self._thread = threading.Thread(target=self._run, name="gateway-journal", daemon=True)
        self._thread.start()

    def put(self, entry: _Entry) -> None:
        self._queue.put(entry)

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            while not self._queue.empty():
                batch.append(self._queue.get())
            self._file.write(b"".join(call_json(Call(*e[:-1])) + b"\n" for e in batch if e is not None))
            self._file.flush()
            if None in batch:
                return

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()
        self._file.close()
