"""``evaljig-report compare BASE NEW``: what changed per case and metric between two runs.

A metric regressed when it went from pass to fail, or kept its status with a lower score
(beyond ``tolerance``); a case regressed when it newly has errors. Transitions to or from
skip are listed as changed, never as regressions. Cases are matched on (session, suite, case_id).
A case or metric of the base that is missing from the new run **disappeared**: ``--fail-on-regression``
fails on it too (unless ``--allow-missing``), since a vanished case is a result nobody checked.

Repeated cases (``--evaljig-repeats K``: each metric has runs and passes) are judged by their pass
counts: a metric regressed when it passed every base run and failed every new run, or when Fisher's
exact test (one-sided, ``_significance``) says the drop in passes is significant at ``alpha``. A
drop that is not significant is listed as changed, with its p-value: noise does not block a merge.
With one run on each side the first rule is exactly the single-run rule (pass -> fail regressed),
so a deterministic suite is judged as before. ``must_pass`` names cases that gate on any failure.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from evaljig_common import EvaljigError
from evaljig_report._collect import collect
from evaljig_report._layout import INDEX_FILE, MERGED_DIR
from evaljig_report._schema import CASE_STATUSES, METRIC_STATUSES
from evaljig_report._significance import fisher_better, fisher_worse

KINDS = ("regressed", "improved", "appeared", "disappeared", "changed")
#: A case ``--must-pass`` names that did not pass in the new run (listed apart; gates like a regression).
MUST_PASS = "must-pass"
DEFAULT_ALPHA = 0.05
CASE_LEVEL = "(case)"
MAX_LISTED = 200

#: (session, suite, case_id): how cases of two runs are matched.
CaseKey = tuple[str, str, str]


class StatusScore(NamedTuple):
    """A metric's status and score in one run; a case-level change (``CASE_LEVEL``) has the case's status, no score."""

    status: str
    score: float | None
    #: Repeated cases only (``--evaljig-repeats``): runs that did not skip, and how many passed.
    runs: int | None = None
    passes: int | None = None

    @property
    def counts(self) -> tuple[int, int]:
        """(passes, runs); a single run counts as one run, passed or not (a skip as none)."""
        if self.runs is not None and self.passes is not None:
            return self.passes, self.runs
        return int(self.status == "pass"), int(self.status != "skip")

    def as_json(self) -> dict[str, object]:
        doc: dict[str, object] = {"status": self.status, "score": self.score}
        if self.runs is not None:
            doc.update(runs=self.runs, passes=self.passes)
        return doc


class CompareError(EvaljigError):
    """An input that is neither a merged index nor a folder that can be merged."""


@dataclass(frozen=True)
class Change:
    kind: str
    key: CaseKey
    metric: str
    base: StatusScore | None
    new: StatusScore | None
    #: Fisher's one-sided p-value, when pass counts of repeated runs were compared.
    p_value: float | None = None


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
        cases = {
            r.key: (r.status, {m.name: StatusScore(m.status, m.score, m.runs, m.passes) for m in r.metrics})
            for r in result.rows
        }
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
            runs, passes = _counts(metric)
            outcomes[_text(metric, "name")] = StatusScore(_text(metric, "status", METRIC_STATUSES), score, runs, passes)
        except ValueError as exc:
            raise ValueError(f"metrics[{n}].{exc}") from None
    return key, (status, outcomes)


def _counts(metric: dict[str, Any]) -> tuple[int | None, int | None]:
    """A repeated metric's ``runs`` and ``passes`` (both or neither; 0 <= passes <= runs)."""
    runs, passes = metric.get("runs"), metric.get("passes")
    if runs is None and passes is None:
        return None, None
    if type(runs) is not int or type(passes) is not int or not 0 <= passes <= runs:
        raise ValueError(f"runs/passes: expected whole numbers with 0 <= passes <= runs, found {runs!r}/{passes!r}")
    return runs, passes


def _repeated_change(base: StatusScore, new: StatusScore, tolerance: float, alpha: float) -> Change | None:
    """Pass counts of repeated runs (kind and p-value); a drop or rise that is not significant is only changed."""
    (bp, br), (np_, nr) = base.counts, new.counts
    if br == 0 or nr == 0:  # every run skipped on one side
        return None if base.status == new.status else _change("changed")
    if bp == br and np_ == 0:  # passed every base run, failed every new one: deterministic
        return _change("regressed", fisher_worse(bp, br, np_, nr))
    if bp == 0 and np_ == nr:
        return _change("improved", fisher_better(bp, br, np_, nr))
    if np_ * br < bp * nr:
        p = fisher_worse(bp, br, np_, nr)
        return _change("regressed" if p < alpha else "changed", p)
    if np_ * br > bp * nr:
        p = fisher_better(bp, br, np_, nr)
        return _change("improved" if p < alpha else "changed", p)
    if base.score is not None and new.score is not None and abs(new.score - base.score) > tolerance:
        return _change("changed")  # same pass rate, another mean score: shown, never gating
    return None


def _change(kind: str, p: float | None = None) -> Change:
    """A kind and p-value carrier (key and outcomes are filled in by ``diff``)."""
    return Change(kind, ("", "", ""), "", None, None, p)


def _metric_change(
    base: StatusScore, new: StatusScore, tolerance: float, alpha: float = DEFAULT_ALPHA
) -> Change | None:
    if base.runs is not None or new.runs is not None:
        return _repeated_change(base, new, tolerance, alpha)
    kind = _single_change(base, new, tolerance)
    return None if kind is None else _change(kind)


def _single_change(base: StatusScore, new: StatusScore, tolerance: float) -> str | None:
    bs, bscore, ns, nscore = base.status, base.score, new.status, new.score
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


def check_alpha(alpha: float) -> float:
    """A significance level: strictly between 0 and 1."""
    if not (math.isfinite(alpha) and 0 < alpha < 1):
        raise ValueError(f"alpha must be a number between 0 and 1 (exclusive), not {alpha!r}")
    return alpha


def diff(base: RunOutcomes, new: RunOutcomes, tolerance: float = 0.0, alpha: float = DEFAULT_ALPHA) -> Iterator[Change]:
    """Every change from ``base`` to ``new``, in case order."""
    check_tolerance(tolerance)
    check_alpha(alpha)
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
            elif change := _metric_change(bm, nm, tolerance, alpha):
                yield Change(change.kind, key, metric, bm, nm, change.p_value)


def must_pass_failures(new: RunOutcomes, patterns: Iterable[str]) -> Iterator[Change]:
    """Cases matching a ``--must-pass`` glob (on ``case_id`` or ``suite::case_id``) that did not pass every run.

    One row per failed metric (or the case itself when it has errors or no failed metric), whatever the base said.
    """
    globs = list(patterns)
    if not globs:
        return
    for key in sorted(new.cases):
        _, suite, case_id = key
        if not any(fnmatchcase(case_id, g) or fnmatchcase(f"{suite}::{case_id}", g) for g in globs):
            continue
        status, metrics = new.cases[key]
        failed = [(name, m) for name, m in sorted(metrics.items()) if m.counts[0] < m.counts[1]]
        if status == "error" or (status == "fail" and not failed):
            yield Change(MUST_PASS, key, CASE_LEVEL, None, StatusScore(status, None))
        for name, m in failed:
            yield Change(MUST_PASS, key, name, None, m)


def unmatched_must_pass(new: RunOutcomes, patterns: Iterable[str]) -> list[str]:
    """``--must-pass`` globs that match no case of NEW (a typo, or the case vanished): never a silent pass."""
    return [
        g for g in patterns if not any(fnmatchcase(k[2], g) or fnmatchcase(f"{k[1]}::{k[2]}", g) for k in new.cases)
    ]


def _fmt(outcome: StatusScore | None) -> str:
    if outcome is None:
        return "-"
    text = outcome.status if outcome.score is None else f"{outcome.status} ({outcome.score:g})"
    if outcome.runs is not None:
        text += f", {outcome.passes}/{outcome.runs} runs passed"
    return text


def _fmt_new(change: Change) -> str:
    text = _fmt(change.new)
    return text if change.p_value is None else f"{text}, p={change.p_value:.3g}"


def pass_k_line(label: str, run: RunOutcomes) -> str | None:
    """pass^k (every run passed) and pass@k (at least one did) over the repeated metrics of a run, if any."""
    repeated = [m for _, metrics in run.cases.values() for m in metrics.values() if m.runs is not None and m.runs > 0]
    if not repeated:
        return None
    every = sum(m.passes == m.runs for m in repeated)
    some = sum((m.passes or 0) > 0 for m in repeated)
    k = max(m.runs or 0 for m in repeated)
    return (
        f"{label}: pass^k {every}/{len(repeated)} · pass@k {some}/{len(repeated)} "
        f"(metrics of repeated cases, up to k={k} runs)"
    )


def render_markdown(changes: list[Change], base: RunOutcomes, new: RunOutcomes) -> str:
    counts = {k: sum(c.kind == k for c in changes) for k in KINDS}
    lines = [
        "## evaljig compare: " + " · ".join(f"{counts[k]} {k}" for k in KINDS),
        "",
        f"base: `{base.source}` ({len(base.cases)} cases) → new: `{new.source}` ({len(new.cases)} cases)",
        "",
    ]
    passk = [line for line in (pass_k_line("base", base), pass_k_line("new", new)) if line]
    if passk:
        lines += [*(f"- {line}" for line in passk), ""]
    titled = [(MUST_PASS, "Must pass, did not"), *((kind, kind.capitalize()) for kind in KINDS)]
    for kind, title in titled:
        rows = [c for c in changes if c.kind == kind]
        if rows:
            lines += _section_lines(title, rows)
    if not changes:
        lines.append("No differences.")
    return "\n".join(lines).rstrip("\n") + "\n"


def _section_lines(title: str, rows: list[Change]) -> list[str]:
    """One Markdown table of changes, at most ``MAX_LISTED`` rows, the rest counted."""
    lines = [f"### {title} ({len(rows)})", "", "| session | case | metric | base | new |", "|---|---|---|---|---|"]
    lines += [_row_line(c) for c in rows[:MAX_LISTED]]
    if len(rows) > MAX_LISTED:
        lines.append(f"| … {len(rows) - MAX_LISTED} more | | | | |")
    return [*lines, ""]


def _row_line(c: Change) -> str:
    session, suite, case_id = c.key
    return f"| {session} | `{suite}::{case_id}` | {c.metric} | {_fmt(c.base)} | {_fmt_new(c)} |"


def changes_json(changes: list[Change]) -> list[dict[str, object]]:
    return [
        {
            "kind": c.kind,
            "session": c.key[0],
            "suite": c.key[1],
            "case_id": c.key[2],
            "metric": c.metric,
            "base": None if c.base is None else c.base.as_json(),
            "new": None if c.new is None else c.new.as_json(),
            **({"p_value": c.p_value} if c.p_value is not None else {}),
        }
        for c in changes
    ]
