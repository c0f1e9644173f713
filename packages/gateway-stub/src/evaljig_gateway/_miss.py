"""Explaining a cassette miss: the closest recording found by comparing fields, and the fields that differ.

A character diff of two pretty-printed bodies (difflib) is quadratic: one miss against 40
recorded 3.6 KB prompts held the event loop 35 s, and it called a changed ``temperature``
"100% alike". Here every recorded body is flattened once, when it is filed, to the hashes of
its ``(json path, value)`` pairs (at most :data:`MAX_INDEXED_FIELDS` of them), and those hashes
point back at the recordings holding them. A miss then counts, for each recording on its
method and path, the pairs it shares with the request — work proportional to the postings of
the request's own pairs (run in a worker thread by the app) — and picks the best Jaccard score (ties: the earliest
recording). Only that one recording is flattened in full to list the differing fields by path
(``temperature: 0 -> 0.3``), and "N of M fields alike" counts paths, so a real difference is
never 100%.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from evaljig_common import EvaljigError
from evaljig_gateway._cassette import loads_json
from evaljig_gateway._errors import GatewayError
from evaljig_gateway._journal import Call

#: Pairs of one body that are indexed (the rest are folded into one): bounds the index and a miss's work.
MAX_INDEXED_FIELDS = 64
#: Differing fields listed in a miss (the first is also on the first line).
MAX_DIFF_LINES = 12
#: Characters of a long value shown around its first difference.
CONTEXT_CHARS = 40
#: A value shown for a field a body lacks.
ABSENT = "(absent)"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CODE = "cassette_miss"


def flatten(value: Any) -> dict[str, str]:
    """``{json path: JSON text of the value}`` for each leaf, in document order (iterative: any depth).

    Leaves are scalars, empty containers and lists of scalars (a token-id prompt is one field, not 4,000).
    """
    out: dict[str, str] = {}
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, dict) and item:
            stack.extend((_key_path(path, k), v) for k, v in reversed(item.items()))
        elif isinstance(item, list) and item and any(isinstance(v, dict | list) for v in item):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(item))))
        else:
            out[path] = _json_text(item)
    return out


def _key_path(path: str, key: str) -> str:
    if _NAME.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{_json_text(key)}]"


def _json_text(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:  # past 64 bits, lone surrogates
        return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _fields(body: bytes) -> dict[str, str]:
    """The fields of a canonical body (a match key's third part; none for no body), flattened."""
    return flatten(loads_json(body)) if body else {}


def pair_hashes(fields: dict[str, str]) -> frozenset[int]:
    """The indexed form of a flattened body: a hash per (path, value), the fields past the cap folded into one."""
    items = list(fields.items())
    hashes = {hash(pair) for pair in items[:MAX_INDEXED_FIELDS]}
    if len(items) > MAX_INDEXED_FIELDS:
        hashes.add(hash(tuple(items[MAX_INDEXED_FIELDS:])))
    return frozenset(hashes)


@dataclass
class Group:
    """The recordings of one method and path (query left out): what a miss is compared with."""

    recordings: list[tuple[bytes, int, int]] = field(default_factory=list)
    """Each recording's canonical body, index in the cassette (``interactions[i]``) and number of pair hashes."""
    postings: dict[int, list[int]] = field(default_factory=dict)
    """Each pair hash's recordings (their positions in ``recordings``)."""

    def add(self, body: bytes, place: int) -> None:
        hashes = pair_hashes(_fields(body))
        for h in hashes:
            self.postings.setdefault(h, []).append(len(self.recordings))
        self.recordings.append((body, place, len(hashes)))


def miss(group: Group | None, method: str, target: str, body: bytes) -> GatewayError:
    """The 404 for a request no recording matches, naming the closest recording of ``group`` (its method and
    path) and the fields that differ."""
    if group is None:  # a group is made with its first recording
        nothing = f"Cassette miss: nothing was recorded for {method} {target.split('?', 1)[0]}"
        return GatewayError(404, f"{nothing} (evaljig gateway replay: no recorded answer for this request).", code=CODE)
    wanted = _fields(body)
    wanted_hashes = pair_hashes(wanted)
    shared = Counter(at for h in wanted_hashes for at in group.postings.get(h, ()))

    def jaccard(at: int) -> float:
        union = len(wanted_hashes) + group.recordings[at][2] - shared[at]
        return shared[at] / union if union else 1.0

    best = max(range(len(group.recordings)), key=jaccard)  # the first of equal scores: the earliest recording
    recorded, place, _ = group.recordings[best]
    return GatewayError(404, explain(method, target, place, _fields(recorded), wanted), code=CODE)


def explain(method: str, target: str, place: int, recorded: dict[str, str], wanted: dict[str, str]) -> str:
    """The miss message: a first line naming the closest recording and the first differing field (what a
    failing case shows), then each differing field on its own line."""
    paths = list(dict.fromkeys([*recorded, *wanted]))
    lines = [_difference(p, recorded.get(p), wanted.get(p)) for p in paths if recorded.get(p) != wanted.get(p)]
    alike = len(paths) - len(lines)
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    first = lines[0] if lines else "the query string"
    head = (
        f"Cassette miss: {method} {target} differs from the closest recording, interactions[{place}] "
        f"({alike} of {len(paths)} fields alike): {first}{more}"
    )
    shown = lines[:MAX_DIFF_LINES]
    if len(lines) > MAX_DIFF_LINES:
        shown.append(f"... {len(lines) - MAX_DIFF_LINES} more")
    tail = ("(evaljig gateway replay: no recorded answer for this request; bodies compared as canonical JSON: "
            "keys sorted, ignored fields and behaviour tokens dropped)")  # fmt: skip
    return "\n".join([head, *(f"  {line}" for line in shown), tail])


def _difference(path: str, before: str | None, after: str | None) -> str:
    at = 0
    if before is not None and after is not None:  # both shown from around the first character that differs
        differing = (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b)
        at = next(differing, min(len(before), len(after)))
    old = ABSENT if before is None else _cut(before, at)
    new = ABSENT if after is None else _cut(after, at)
    return f"{path or '(body)'}: {old} -> {new}"


def _cut(text: str, at: int) -> str:
    """``text`` whole when short, else ``CONTEXT_CHARS`` either side of ``at`` with ``…`` for what is left out."""
    if len(text) <= 2 * CONTEXT_CHARS + 10:
        return text
    start = max(0, at - CONTEXT_CHARS)
    end = min(len(text), at + CONTEXT_CHARS)
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


class CassetteMiss(EvaljigError, AssertionError):  # noqa: N818 - named after what happened, like the 404's code
    """A test (or run) that failed after the replaying gateway answered a request with a cassette miss.

    Raised *from* whatever the client made of the 404 (a retry error, an empty answer, a failed
    assertion), so the first thing a reader sees is the gateway's explanation: the request, the
    closest recording and the fields that differ, not the symptom three layers up.
    """

    def __init__(self, explanation: str, *, misses: int = 1, cassette: str | None = None) -> None:
        self.explanation = explanation
        self.misses = misses
        self.cassette = cassette
        where = f" of {cassette}" if cassette else ""
        note = f"({misses} request(s) missed the recording{where}; re-record it if the change is meant)"
        super().__init__(f"{explanation}\n{note}")


CassetteMiss.__module__ = "evaljig_gateway"  # how failures name it: the public import, not the private module


def first_miss(calls: Iterable[Call]) -> tuple[str, int] | None:
    """The first miss explanation among ``calls`` and how many of them missed; ``None`` when none did."""
    misses = [c.miss for c in calls if c.miss is not None]
    return (misses[0], len(misses)) if misses else None
