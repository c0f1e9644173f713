"""Answering from a cassette: a hash lookup per request, recorded order for identical requests.

At load every exchange is filed under its match key (method, path with query, canonical body)
with its answer prepared as the bytes the gateway sends (a compact JSON body, or the list of
SSE events), so serving a recorded answer costs one canonical dump and one dict lookup. Each
key has a cursor: identical requests get the recordings in recorded order and, once they are
used up, the last one again (vcrpy's ``allow_playback_repeats``); ``reset`` rewinds them all.

While misses are recorded (``--on-miss record``) an answer forwarded to a client counts as used
the moment it is filed, and an identical request that arrives while such forwards are still
pending is forwarded too rather than replayed: the answers clients get, in the order they were
sent, are the recordings a later replay gives in that order.

A miss is an OpenAI-shaped 404 (``code: cassette_miss``) naming the closest recording on the
same method and path and the fields that differ (``_miss``); it is computed only on a miss,
as work that hands the event loop back.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

from evaljig_common import MAX_JSON_DEPTH, depth_exceeds
from evaljig_gateway._cassette import (
    DEFAULT_IGNORED_FIELDS,
    SSE_TYPE,
    Exchange,
    MatchKey,
    compact_json,
    match_key,
    request_json,
    sse_events,
)
from evaljig_gateway._errors import GatewayError
from evaljig_gateway._miss import Group
from evaljig_gateway._miss import miss as _miss
from evaljig_gateway._replies import Reply


def _answer(exchange: Exchange) -> Reply:
    """The reply ``exchange`` gives, as the gateway sends it; never sent itself (see ``Replayer.answer``)."""
    content_type = exchange.content_type or "application/json"
    headers = [(n.encode(), v.encode()) for n, v in exchange.headers if n != "content-type"]
    if content_type.startswith(SSE_TYPE):
        return Reply(exchange.status, b"", content_type.encode(), headers, sse_events(exchange.body))
    body = exchange.body.encode()
    if "json" in content_type and body.strip():
        body = compact_json(exchange.body)  # sent compact, as a server would
    return Reply(exchange.status, body, content_type.encode(), headers)


class Replayer:
    """The answers of one cassette, by match key, with a cursor per key."""

    def __init__(self, exchanges: Sequence[Exchange], ignore: frozenset[str] = DEFAULT_IGNORED_FIELDS) -> None:
        self.ignore = ignore
        self._answers: dict[MatchKey, list[Reply]] = {}
        self._cursors: dict[MatchKey, int] = {}
        self._pending: Counter[MatchKey] = Counter()
        self._groups: dict[tuple[str, str], Group] = {}
        self._count = 0
        self._lock = threading.Lock()
        for exchange in exchanges:
            self.add(exchange)

    def __len__(self) -> int:
        return self._count

    def key(self, method: str, path: str, body: Any) -> MatchKey:
        """The match key of a request; a 400 for a body nested deeper than ``MAX_JSON_DEPTH`` (the canonical
        form is computed recursively, and no recorded request nests that deep: the cassette reader refuses it)."""
        if depth_exceeds(body, MAX_JSON_DEPTH):
            raise GatewayError(
                400,
                f"The request body nests deeper than {MAX_JSON_DEPTH} levels, so it cannot be matched against the "
                "cassette (no recording nests that deep).",
                code="invalid_json",
            )
        return match_key(method, path, body, self.ignore)

    def add(self, exchange: Exchange, *, used: bool = False) -> None:
        """File ``exchange`` after those already recorded for the same request (``used``: it was just sent to a
        client, so that request's cursor moves past it)."""
        key = self.key(exchange.method, exchange.path, request_json(exchange.request_body))
        with self._lock:
            answers = self._answers.setdefault(key, [])
            answers.append(_answer(exchange))
            if used:
                self._cursors[key] = len(answers)
            if len(answers) == 1:  # a miss is compared with distinct requests
                group = self._groups.setdefault((key[0], key[1].split("?", 1)[0]), Group())
                group.add(key[2], self._count)
            self._count += 1

    def holds(self, key: MatchKey) -> bool:
        return key in self._answers

    def to_forward(self, key: MatchKey) -> bool:
        """Recording misses: whether a request the cassette holds (``holds``) goes upstream all the same — its
        recordings are used up while an identical request is still being forwarded (replaying one now would
        hand it an answer out of the order the cassette will replay)."""
        return self._pending[key] > 0 and self._cursors.get(key, 0) >= len(self._answers[key])

    def forwarding(self, key: MatchKey, delta: int) -> None:
        """Count a forward of ``key`` starting (+1) or ending (-1)."""
        with self._lock:
            self._pending += Counter({key: delta})  # Counter's += drops a count that falls to 0

    def answer(self, key: MatchKey) -> Reply:
        """The next recorded answer for a ``key`` the cassette ``holds`` (the last one again once all were used)."""
        answers = self._answers[key]  # the app asks only for what ``holds`` found: recordings are never removed
        with self._lock:
            at = self._cursors.get(key, 0)
            self._cursors[key] = at + 1
        kept = answers[min(at, len(answers) - 1)]
        events = list(kept.events) if kept.events is not None else None  # a copy: the app adds headers to it
        return Reply(kept.status, kept.body, kept.content_type, list(kept.headers), events)

    def reset(self) -> None:
        """Rewind every key to its first recording."""
        with self._lock:
            self._cursors = {}

    def miss(self, key: MatchKey) -> GatewayError:
        """The 404 for a request the cassette does not hold, naming the closest recording and the differing
        fields (see ``_miss``)."""
        method, target, body = key
        return _miss(self._groups.get((method, target.split("?", 1)[0])), method, target, body)
