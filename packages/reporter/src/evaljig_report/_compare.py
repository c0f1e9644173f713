"""``evaljig-report compare BASE NEW``: what changed per case and metric between two runs.

A metric regressed when it went from pass to fail, or kept its status with a lower score
(beyond ``tolerance``); a case regressed when it newly has errors. Transitions to or from
skip are listed as changed, never as regressions. Cases are matched on (session, suite, case_id).
A case or metric of the base that is missing from the new run **disappeared**: ``--fail-on-regression``
fails on it too (unless ``--allow-missing``), since a vanished case is a result nobody checked.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from evaljig_common import EvaljigError
from evaljig_report._collect import collect
from evaljig_report._layout import INDEX_FILE, MERGED_DIR
from evaljig_report._schema import CASE_STATUSES, METRIC_STATUSES

KINDS = ("regressed", "improved", "appeared", "disappeared", "changed")
CASE_LEVEL = "(case)"
MAX_LISTED = 200

#: (session, suite, case_id): how cases of two runs are matched.
CaseKey = tuple[str, str, str]


class StatusScore(NamedTuple):
    """A metric's status and score in one run; a case-level change (``CASE_LEVEL``) has the case's status, no score."""

    status: str
    score: float | None


class CompareError(EvaljigError):
    """An input that is neither a merged index nor a folder that can be merged."""


@dataclass(frozen=True)
class Change:
    kind: str
    key: CaseKey
    metric: str
    base: StatusScore | None
    new: StatusScore | None


@dataclass(frozen=True)
class RunOutcomes:
    """Per case: its status and, per metric, its status and score."""

    cases: dict[CaseKey, tuple[str, dict[str, StatusScore]]]
    source: str


def load_outcomes(path: Path) -> RunOutcomes:
    """From a merged ``index.json``, a folder holding one (or ``merged/index.json``), or raw report folders.

    An input with no case at all is unusable: comparing against it would report every case as
    appeared or disappeared, and never as a regression.
    """
    for candidate in (path, path / INDEX_FILE, path / MERGED_DIR / INDEX_FILE):
        if candidate.is_file():
            try:
                index = orjson.loads(candidate.read_bytes())
            except (OSError, orjson.JSONDecodeError) as exc:
                raise CompareError(f"{candidate}: unreadable index ({exc})") from exc
            if isinstance(index, dict) and index.get("kind") == "merged":
                return _nonempty(_from_index(index, str(candidate)), "")
    if path.is_dir():
        result = collect([path])
        cases = {r.key: (r.status, {m.name: StatusScore(m.status, m.score) for m in r.metrics}) for r in result.rows}
        unusable = f" ({len(result.problems)} files could not be used)" if result.problems else ""
        return _nonempty(RunOutcomes(cases, str(path)), unusable)
    raise CompareError(f"{path}: not a merged index.json or a reports folder")


def _nonempty(outcomes: RunOutcomes, detail: str) -> RunOutcomes:
    if not outcomes.cases:
        raise CompareError(f"{outcomes.source}: no cases to compare{detail}")
    return outcomes


def _from_index(index: dict[str, object], source: str) -> RunOutcomes:
    rows = index.get("cases")
    if not isinstance(rows, list):
        raise CompareError(f"{source}: cases: expected a list of case rows, found {type(rows).__name__}")
    cases: dict[CaseKey, tuple[str, dict[str, StatusScore]]] = {}
    for n, row in enumerate(rows):
        try:
            key, outcomes = _index_row(row)
        except ValueError as exc:
            raise CompareError(f"{source}: cases[{n}]: {exc}") from None
        cases[key] = outcomes
    return RunOutcomes(cases, source)


def _text(row: dict[str, Any], field: str, allowed: Collection[str] = ()) -> str:
    value = row.get(field)
    if not isinstance(value, str) or (allowed and value not in allowed):
        expected = " or ".join(sorted(allowed)) if allowed else "a string"
        raise ValueError(f"{field}: expected {expected}, found {value!r:.60}")
    return value


def _index_row(row: object) -> tuple[CaseKey, tuple[str, dict[str, StatusScore]]]:
    """One case row of a merged index; ``ValueError`` names the field that is missing or malformed."""
    if not isinstance(row, dict):
        raise ValueError(f"expected a case row (an object), found {row!r:.60}")
    key = (_text(row, "session"), _text(row, "suite"), _text(row, "case_id"))
    status = _text(row, "status", CASE_STATUSES)
    metrics = row.get("metrics")
    if not isinstance(metrics, list):
        raise ValueError(f"metrics: expected a list, found {metrics!r:.60}")
    outcomes: dict[str, StatusScore] = {}
    for n, metric in enumerate(metrics):
        if not isinstance(metric, dict):
            raise ValueError(f"metrics[{n}]: expected an object, found {metric!r:.60}")
        score = metric.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            raise ValueError(f"metrics[{n}].score: expected a number or null, found {score!r:.60}")
        try:
            outcomes[_text(metric, "name")] = StatusScore(_text(metric, "status", METRIC_STATUSES), score)
        except ValueError as exc:
            raise ValueError(f"metrics[{n}].{exc}") from None
    return key, (status, outcomes)


def _metric_change(base: StatusScore, new: StatusScore, tolerance: float) -> str | None:
    (bs, bscore), (ns, nscore) = base, new
    if bs != ns:
        if "skip" in (bs, ns):
            return "changed"
        return "regressed" if ns == "fail" else "improved"
    if bscore is not None and nscore is not None:
        if nscore < bscore - tolerance:
            return "regressed"
        if nscore > bscore + tolerance:
            return "improved"
    return None


def check_tolerance(tolerance: float) -> float:
    """A score drop to ignore: finite and not negative (NaN would silently ignore every drop)."""
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be a finite number >= 0, not {tolerance!r}")
    return tolerance


def diff(base: RunOutcomes, new: RunOutcomes, tolerance: float = 0.0) -> Iterator[Change]:
    """Every change from ``base`` to ``new``, in case order."""
    check_tolerance(tolerance)
    for key in sorted(base.cases.keys() | new.cases.keys()):
        b, n = base.cases.get(key), new.cases.get(key)
        if b is None or n is None:
            kind = "appeared" if b is None else "disappeared"
            present = n if n is not None else b
            assert present is not None
            outcomes = present[1] or {
                CASE_LEVEL: StatusScore(present[0], None)
            }  # a case without metrics still (dis)appears
            for metric, outcome in outcomes.items():
                yield Change(kind, key, metric, None if b is None else outcome, outcome if b is None else None)
            continue
        if n[0] == "error" and b[0] != "error":
            yield Change("regressed", key, CASE_LEVEL, StatusScore(b[0], None), StatusScore(n[0], None))
        elif b[0] == "error" and n[0] != "error":
            yield Change("improved", key, CASE_LEVEL, StatusScore(b[0], None), StatusScore(n[0], None))
        for metric in sorted(b[1].keys() | n[1].keys()):
            bm, nm = b[1].get(metric), n[1].get(metric)
            if bm is None or nm is None:
                yield Change("appeared" if bm is None else "disappeared", key, metric, bm, nm)
            elif change := _metric_change(bm, nm, tolerance):
                yield Change(change, key, metric, bm, nm)


def _fmt(outcome: StatusScore | None) -> str:
    if outcome is None:
        return "-"
    status, score = outcome
    return status if score is None else f"{status} ({score:g})"


def render_markdown(changes: list[Change], base: RunOutcomes, new: RunOutcomes) -> str:
    counts = {k: sum(c.kind == k for c in changes) for k in KINDS}
    lines = [
        "## evaljig compare: " + " · ".join(f"{counts[k]} {k}" for k in KINDS),
        "",
        f"base: `{base.source}` ({len(base.cases)} cases) → new: `{new.source}` ({len(new.cases)} cases)",
        "",
    ]
    for kind in KINDS:
        rows = [c for c in changes if c.kind == kind]
        if not rows:
            continue
        lines += [
            f"### {kind.capitalize()} ({len(rows)})",
            "",
            "| session | case | metric | base | new |",
            "|---|---|---|---|---|",
        ]
        for c in rows[:MAX_LISTED]:
            session, suite, case_id = c.key
            lines.append(f"| {session} | `{suite}::{case_id}` | {c.metric} | {_fmt(c.base)} | {_fmt(c.new)} |")
        if len(rows) > MAX_LISTED:
            lines.append(f"| … {len(rows) - MAX_LISTED} more | | | | |")
        lines.append("")
    if not changes:
        lines.append("No differences.")
    return "\n".join(lines).rstrip("\n") + "\n"


def changes_json(changes: list[Change]) -> list[dict[str, object]]:
    return [
        {
            "kind": c.kind,
            "session": c.key[0],
            "suite": c.key[1],
            "case_id": c.key[2],
            "metric": c.metric,
            "base": None if c.base is None else c.base._asdict(),
            "new": None if c.new is None else c.new._asdict(),
        }
        for c in changes
    ]
