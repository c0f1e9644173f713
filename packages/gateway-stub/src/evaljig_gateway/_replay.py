"""Answering from a cassette: a hash lookup per request, recorded order for identical requests.

At load every exchange is filed under its match key (method, path with query, canonical body)
with its answer prepared as the bytes the gateway sends (a compact JSON body, or the list of
SSE events), so serving a recorded answer costs one canonical dump and one dict lookup. Each
key has a cursor: identical requests get the recordings in recorded order and, once they are
used up, the last one again (vcrpy's ``allow_playback_repeats``); ``reset`` rewinds them all.

A miss is an OpenAI-shaped 404 (``code: cassette_miss``) that names the closest recorded
request on the same method and path and shows a short diff, so a changed prompt is found at
a glance. The search only runs on a miss.
"""

from __future__ import annotations

import contextlib
import difflib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from evaljig_gateway._cassette import (
    DEFAULT_IGNORED_FIELDS,
    Exchange,
    MatchKey,
    loads_json,
    match_key,
    pretty_json,
    sse_events,
)
from evaljig_gateway._errors import GatewayError
from evaljig_gateway._replies import Reply

#: Recorded requests compared with a missed one (the first of that method and path).
MAX_CANDIDATES = 200
#: Bodies longer than this (characters) are compared line by line: a character diff is quadratic.
CHAR_COMPARE_LIMIT = 4000
#: Lines of unified diff a miss shows.
MAX_DIFF_LINES = 12


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    content_type: bytes
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes
    events: tuple[bytes, ...] | None

    def reply(self) -> Reply:
        events = list(self.events) if self.events is not None else None
        return Reply(self.status, self.body, self.content_type, list(self.headers), events)


def _answer(exchange: Exchange) -> _Answer:
    content_type = exchange.content_type or "application/json"
    headers = tuple((n.encode(), v.encode()) for n, v in exchange.headers if n != "content-type")
    if exchange.streamed:
        return _Answer(exchange.status, content_type.encode(), headers, b"", tuple(sse_events(exchange.body)))
    body = exchange.body.encode()
    if "json" in content_type and body.strip():
        with contextlib.suppress(orjson.JSONDecodeError, orjson.JSONEncodeError):  # past 64 bits: as recorded
            body = orjson.dumps(orjson.loads(body))  # sent compact, as a server would
    return _Answer(exchange.status, content_type.encode(), headers, body, None)


class Replayer:
    """The answers of one cassette, by match key, with a cursor per key."""

    def __init__(self, exchanges: Sequence[Exchange], ignore: frozenset[str] = DEFAULT_IGNORED_FIELDS) -> None:
        self.ignore = ignore
        self._answers: dict[MatchKey, list[_Answer]] = {}
        self._cursors: dict[MatchKey, int] = {}
        self._lock = threading.Lock()
        for exchange in exchanges:
            self.add(exchange)

    def __len__(self) -> int:
        return sum(len(v) for v in self._answers.values())

    def key(self, method: str, path: str, body: Any) -> MatchKey:
        return match_key(method, path, body, self.ignore)

    def add(self, exchange: Exchange) -> None:
        """File ``exchange`` after those already recorded for the same request."""
        body = loads_json(exchange.request_body) if exchange.request_body.strip() else None
        key = self.key(exchange.method, exchange.path, body)
        with self._lock:
            self._answers.setdefault(key, []).append(_answer(exchange))

    def holds(self, key: MatchKey) -> bool:
        return key in self._answers

    def answer(self, key: MatchKey) -> Reply | None:
        """The next recorded answer for ``key`` (the last one again once all were used), or None on a miss."""
        answers = self._answers.get(key)
        if answers is None:
            return None
        with self._lock:
            at = self._cursors.get(key, 0)
            self._cursors[key] = at + 1
        return answers[min(at, len(answers) - 1)].reply()

    def reset(self) -> None:
        """Rewind every key to its first recording."""
        with self._lock:
            self._cursors = {}

    def miss(self, key: MatchKey) -> GatewayError:
        """The 404 for a request the cassette does not hold, naming the closest recorded one."""
        method, path, body = key
        wanted = _pretty_canonical(body)
        candidates = [k for k in self._answers if k[0] == method and k[1].split("?", 1)[0] == path.split("?", 1)[0]]
        text = f"No recorded answer in the cassette for {method} {path} with this body (evaljig gateway replay)."
        if not candidates:
            return GatewayError(404, f"{text} Nothing was recorded for {method} {path.split('?', 1)[0]}.",
                                code="cassette_miss")  # fmt: skip
        best, best_text, best_ratio = candidates[0], "", -1.0
        for candidate in candidates[:MAX_CANDIDATES]:
            text_b = _pretty_canonical(candidate[2])
            ratio = _likeness(text_b, wanted, best_ratio)
            if ratio > best_ratio:
                best, best_text, best_ratio = candidate, text_b, ratio
        best_lines, wanted_lines = best_text.splitlines(), wanted.splitlines()
        diff = list(difflib.unified_diff(best_lines, wanted_lines, "recorded", "requested", n=1, lineterm=""))
        shown = diff[:MAX_DIFF_LINES] + ([f"... ({len(diff) - MAX_DIFF_LINES} more diff lines)"]
                                         if len(diff) > MAX_DIFF_LINES else [])  # fmt: skip
        message = (
            f"{text} Closest recorded request: {best[0]} {best[1]} ({best_ratio:.0%} alike, compared after "
            "sorting keys, dropping ignored fields and behaviour tokens):\n" + "\n".join(shown)
        )
        return GatewayError(404, message, code="cassette_miss")


def _likeness(recorded: str, wanted: str, to_beat: float) -> float:
    """difflib's ratio by character for bodies up to ``CHAR_COMPARE_LIMIT`` (by line beyond): 0 to 1."""
    a, b = (recorded, wanted) if max(len(recorded), len(wanted)) <= CHAR_COMPARE_LIMIT else (
        recorded.splitlines(), wanted.splitlines())  # fmt: skip
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() <= to_beat or matcher.quick_ratio() <= to_beat:
        return -1.0
    return matcher.ratio()


def _pretty_canonical(body: bytes) -> str:
    if not body:
        return ""
    try:
        return pretty_json(orjson.loads(body))
    except orjson.JSONDecodeError:
        return body.decode("utf-8", errors="replace")
