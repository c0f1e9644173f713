"""``evaljig-report compare BASE NEW``: what changed per case and metric between two runs.

A metric regressed when it went from pass to fail, or kept its status with a lower score
(beyond ``tolerance``); a case regressed when it newly has errors. Transitions to or from
skip are listed as changed, never as regressions. Cases are matched on (session, suite, case_id).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from evaljig_report.layout import INDEX_FILE, MERGED_DIR

KINDS = ("regressed", "improved", "appeared", "disappeared", "changed")
CASE_LEVEL = "(case)"
MAX_LISTED = 200

Outcome = tuple[str, float | None]  # (status, score)
CaseKey = tuple[str, str, str]


class CompareError(Exception):
    """An input that is neither a merged index nor a folder that can be merged."""


@dataclass(frozen=True)
class Change:
    kind: str
    key: CaseKey
    metric: str
    base: Outcome | None
    new: Outcome | None


@dataclass(frozen=True)
class RunOutcomes:
    """Per case: its status and, per metric, (status, score)."""

    cases: dict[CaseKey, tuple[str, dict[str, Outcome]]]
    source: str


def load_outcomes(path: Path) -> RunOutcomes:
    """From a merged ``index.json``, a folder holding one (or ``merged/index.json``), or raw report folders."""
    for candidate in (path, path / INDEX_FILE, path / MERGED_DIR / INDEX_FILE):
        if candidate.is_file():
            try:
                index = orjson.loads(candidate.read_bytes())
            except (OSError, orjson.JSONDecodeError) as exc:
                raise CompareError(f"{candidate}: unreadable index ({exc})") from exc
            if isinstance(index, dict) and index.get("kind") == "merged":
                return _from_index(index, str(candidate))
    if path.is_dir():
        from evaljig_report.merge import collect

        result = collect([path])
        cases = {r.key: (r.status, {m[0]: (m[1], m[2]) for m in r.metrics}) for r in result.rows}
        return RunOutcomes(cases, str(path))
    raise CompareError(f"{path}: not a merged index.json or a reports folder")


def _from_index(index: dict[str, object], source: str) -> RunOutcomes:
    cases: dict[CaseKey, tuple[str, dict[str, Outcome]]] = {}
    rows = index.get("cases")
    for row in rows if isinstance(rows, list) else []:
        key = (str(row["session"]), str(row["suite"]), str(row["case_id"]))
        cases[key] = (str(row["status"]), {str(m["name"]): (str(m["status"]), m.get("score")) for m in row["metrics"]})
    return RunOutcomes(cases, source)


def _metric_change(base: Outcome, new: Outcome, tolerance: float) -> str | None:
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


def diff(base: RunOutcomes, new: RunOutcomes, tolerance: float = 0.0) -> Iterator[Change]:
    """Every change from ``base`` to ``new``, in case order."""
    for key in sorted(base.cases.keys() | new.cases.keys()):
        b, n = base.cases.get(key), new.cases.get(key)
        if b is None or n is None:
            kind = "appeared" if b is None else "disappeared"
            present = n if n is not None else b
            assert present is not None
            for metric, outcome in present[1].items():
                yield Change(kind, key, metric, None if b is None else outcome, outcome if b is None else None)
            continue
        if n[0] == "error" and b[0] != "error":
            yield Change("regressed", key, CASE_LEVEL, (b[0], None), (n[0], None))
        elif b[0] == "error" and n[0] != "error":
            yield Change("improved", key, CASE_LEVEL, (b[0], None), (n[0], None))
        for metric in sorted(b[1].keys() | n[1].keys()):
            bm, nm = b[1].get(metric), n[1].get(metric)
            if bm is None or nm is None:
                yield Change("appeared" if bm is None else "disappeared", key, metric, bm, nm)
            elif change := _metric_change(bm, nm, tolerance):
                yield Change(change, key, metric, bm, nm)


def _fmt(outcome: Outcome | None) -> str:
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
            "base": None if c.base is None else {"status": c.base[0], "score": c.base[1]},
            "new": None if c.new is None else {"status": c.new[0], "score": c.new[1]},
        }
        for c in changes
    ]
