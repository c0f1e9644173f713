"""What a merge reads: every case under the inputs as one small row, the problems, and the metric totals.

The data the writers (``merge``, ``html``, ``summary``, ``junit``) and ``compare`` share lives here,
so none of them imports another. A case is identified by (session, suite, case_id): found twice
with the same content (a shard folder given twice), it is merged once; split across workers
(metrics of one case ran on two workers), its metrics are joined; a metric found with different
outcomes is a conflict, listed as a problem, and the worst outcome is kept. The result does not
depend on the input order.

A case's status is derived from its metrics and errors (``case_status``), never taken from the file:
a file whose stated ``status`` disagrees is merged with the derived one and listed as a problem.
Case files are read by the strict JSON reader (evaljig-common's ``loads_strict``): a repeated key
or nesting deeper than ``MAX_CASE_DEPTH`` makes the file a problem, never a failed merge.

Nothing collected goes missing: a case a worker listed in its ``collected.json`` but nobody
recorded becomes an ``error`` row saying why (a worker or the session died, or the session
stopped early), and worker or session folders without their ``index.json`` are problems.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from evaljig_common import StrictJSONError, loads_strict
from evaljig_report._discover import MAX_CASE_BYTES, MAX_CASE_DEPTH, Collected, Found, Problem, iter_cases
from evaljig_report._layout import HTML_FILE, INDEX_FILE, SUMMARY_FILE, display_path
from evaljig_report._rows import CaseRow, status_counts
from evaljig_report._schema import schema_errors


@dataclass
class MergeResult:
    """What a merge found and wrote."""

    out_dir: Path
    rows: list[CaseRow]
    problems: list[Problem]
    duplicates: int = 0
    files_read: int = 0
    inputs: list[str] = field(default_factory=list)
    #: Every worker folder the cases came from, as ``run/session/worker`` (the proposal's ``runs``).
    runs: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        return status_counts(self.rows)

    @property
    def html(self) -> Path:
        return self.out_dir / HTML_FILE

    @property
    def summary(self) -> Path:
        return self.out_dir / SUMMARY_FILE


def collect(
    inputs: Sequence[Path], *, skip: Iterable[Path] = (), validate: bool = False, max_bytes: int = MAX_CASE_BYTES
) -> MergeResult:
    """Read every case under ``inputs`` into rows; unusable files and conflicting results become problems.

    Everything is sorted, so the same files give the same result in any input order.
    """
    table: dict[tuple[str, str, str], CaseRow] = {}
    problems: list[Problem] = []
    result = MergeResult(Path(), [], problems, inputs=sorted(str(p) for p in inputs))
    collected: list[Collected] = []
    with _no_cyclic_gc():
        for item in iter_cases(inputs, skip, max_bytes=max_bytes):
            if isinstance(item, Problem):
                problems.append(Problem(display_path(item.path), item.problem))
                continue
            if isinstance(item, Collected):
                collected.append(item)
                continue
            result.files_read += 1
            row = _row(item, problems, validate, result.runs)
            if row is None:
                continue
            known = table.get(row.key)
            if known is None:
                table[row.key] = row
            else:
                known.absorb(row)
    _reconcile(table, collected, problems)
    result.rows = sorted(table.values(), key=lambda r: r.key)
    for row in result.rows:
        result.duplicates += row.duplicates
        problems += _conflicts(row)
    problems.sort(key=lambda p: (p.path, p.problem))
    return result


def _reconcile(table: dict[tuple[str, str, str], CaseRow], collected: list[Collected], problems: list[Problem]) -> None:
    """Every collected case that no file recorded becomes an ``error`` row; unfinished folders become problems."""
    expected: dict[tuple[str, str, str], tuple[str, set[str]]] = {}
    dead: dict[str, set[str]] = {}  # session folder -> workers without an index
    for found in collected:
        worker_dir = Path(found.path).parent
        session_dir = worker_dir.parent
        dead.setdefault(str(session_dir), set())
        if not found.finished:
            dead[str(session_dir)].add(worker_dir.name)
            problems.append(
                Problem(display_path(str(worker_dir)), "worker folder without index.json: it crashed or was killed")
            )
        try:
            doc = orjson.loads(found.data)
            for row in doc["cases"]:
                key = (str(doc["session"]), str(row["suite"]), str(row["case_id"]))
                expected.setdefault(key, (str(row.get("kind", "eval")), set()))[1].add(str(session_dir))
        except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
            problems.append(Problem(display_path(found.path), f"unusable list of collected cases: {exc}"))
    for session in sorted(dead):
        if not (Path(session) / INDEX_FILE).exists():
            problems.append(
                Problem(display_path(session), "session folder without index.json: the session did not finish")
            )
    for key, (kind, session_dirs) in expected.items():
        if key not in table:
            why = _missing_reason(sorted(w for d in session_dirs for w in dead[d]), session_dirs)
            table[key] = CaseRow(key[0], key[1], key[2], kind, "error", [], [why], [], 0.0)


def _missing_reason(dead_workers: list[str], session_dirs: set[str]) -> str:
    if dead_workers:
        return (
            f"collected but no result: worker {', '.join(dead_workers)} crashed or was killed "
            "before this case finished (it wrote no index.json)"
        )
    if not all((Path(d) / INDEX_FILE).exists() for d in session_dirs):
        return "collected but no result: the test session crashed or was killed before this case ran"
    return "collected but no result: the session stopped before this case ran (-x/--maxfail or an interrupt)"


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic GC while rows pile up: the reads create no cycles, and each collection
    would rescan every row kept so far (about a tenth of a 100k-file merge)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _conflicts(row: CaseRow) -> list[Problem]:
    """A problem per metric whose files disagree, on the first of the case's files, naming the others."""
    notes = row.conflict_notes()
    if not notes:
        return []
    first, *others = (display_path(p) for p in row.paths)
    return [Problem(first, f"{note}; other files: {', '.join(others)}") for note in notes]


def _row(found: Found, problems: list[Problem], validate: bool, runs: set[str]) -> CaseRow | None:
    try:
        doc = loads_strict(found.data, max_depth=MAX_CASE_DEPTH)
    except StrictJSONError as exc:
        problems.append(Problem(display_path(found.path), _unreadable(found.data, exc)))
        return None
    try:
        row = CaseRow.from_doc(doc, found.path)
        if validate and (errors := schema_errors(doc)):
            raise ValueError(f"schema: {errors[0]}")
    except ValueError as exc:
        problems.append(Problem(display_path(found.path), f"does not match the case schema: {exc}"))
        return None
    stated = doc.get("status")
    if stated != row.status:
        problems.append(
            Problem(
                display_path(found.path),
                f"stated status {_short_repr(stated)} disagrees with its metrics and errors, which make it "
                f"{row.status!r}: merged as {row.status!r}",
            )
        )
    parts = [doc["source"].get(k) for k in ("run", "session", "worker")]
    if all(type(p) is str for p in parts):
        runs.add("/".join(parts))
    return row


def _unreadable(data: bytes, exc: StrictJSONError) -> str:
    """Why a case file's bytes are not a usable JSON document."""
    if not data.strip():
        return "empty file"
    if exc.line is not None:  # the parser stopped part way: a cut-off write or a corrupted file
        return "not valid JSON (truncated or corrupt)"
    return f"not valid JSON: {exc.reason}"


def _short_repr(value: object, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class MetricStat:
    """How one metric fared across all cases."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(("pass", "fail", "skip"), 0))
    score_sum: float = 0.0
    scored: int = 0

    @property
    def mean(self) -> float | None:
        return self.score_sum / self.scored if self.scored else None


@dataclass
class MetricStats:
    """Per-metric pass/fail/skip counts and mean scores, computed once per merge."""

    by_name: dict[str, MetricStat]

    @classmethod
    def of(cls, rows: Iterable[CaseRow]) -> MetricStats:
        by_name: dict[str, MetricStat] = {}
        for row in rows:
            for metric in row.metrics:
                stat = by_name.get(metric.name)
                if stat is None:
                    stat = by_name[metric.name] = MetricStat()
                stat.counts[metric.status] += 1
                if metric.score is not None:
                    stat.score_sum += metric.score
                    stat.scored += 1
        return cls(dict(sorted(by_name.items())))
