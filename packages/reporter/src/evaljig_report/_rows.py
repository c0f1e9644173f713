"""The small per-case summary a merge keeps in memory (details stay on disk)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from evaljig_report._casefile import case_status
from evaljig_report._schema import ARTIFACT_FILE, METRIC_STATUSES, SCHEMA_VERSION

#: Reasons and errors kept in a row are cut to this many characters (full text stays in case.json).
MAX_ROW_TEXT = 300
#: index.json's ``inference_status`` for a tool that returned no ``status`` (case.json then has none).
UNKNOWN_INFERENCE_STATUS = "unknown"


class MetricOutcome(NamedTuple):
    """What two files must agree on for a metric to be the same result."""

    status: str
    score: float | None
    reason: str


class MetricRow(NamedTuple):
    """One metric of a case as a merge keeps it (a tuple: 100,000 cases keep a few hundred thousand)."""

    name: str
    status: str
    score: float | None
    #: Kept only for metrics that did not pass.
    reason: str
    duration_s: float
    #: Under ``--evaljig-repeats``: the attempts that did not skip, and how many of them passed. ``None`` for a
    #: single run (the report then shows exactly what it showed before repeats existed).
    runs: int | None = None
    passes: int | None = None

    @property
    def outcome(self) -> MetricOutcome:
        return MetricOutcome(self.status, self.score, self.reason)


#: Worst first: a conflict keeps the worse result, whichever file was read first.
_STATUS_RANK = {"fail": 0, "pass": 1, "skip": 2}


def _short(text: object) -> str:
    s = "" if text is None else str(text)
    return s if len(s) <= MAX_ROW_TEXT else s[: MAX_ROW_TEXT - 1] + "…"


def _name(metric: MetricRow) -> str:
    return metric.name


def _outcome_key(outcome: MetricOutcome) -> tuple[int, bool, float, str]:
    """Worst first: fail, pass, skip; then the lower score; then the reason, so the order is total."""
    status, score, reason = outcome
    return (_STATUS_RANK[status], score is None, score or 0.0, reason)


def _worst(a: MetricRow, b: MetricRow) -> MetricRow:
    """The worse of two results of one metric; equal outcomes keep the longer duration."""
    return min(a, b, key=lambda m: (*_outcome_key(m.outcome), -m.duration_s))


def describe_outcome(outcome: MetricOutcome) -> str:
    status, score, reason = outcome
    text = status if score is None else f"{status} (score {score:g})"
    return f"{text}: {reason}" if reason else text


def outcome_of(metric: dict[str, Any]) -> MetricOutcome:
    """A case file's metric as a row keeps it: a score that is not a number is None; pass keeps no reason."""
    status: Any = metric.get("status")
    score = metric.get("score")
    if type(score) is not float and type(score) is not int:
        score = None
    return MetricOutcome(status, score, "" if status == "pass" else _short(metric.get("reason")))


def _check_artifacts(artifacts: Any) -> None:
    """The drill-down opens ``file`` inside the case folder, so it must be one plain name."""
    if type(artifacts) is not list:
        raise ValueError("artifacts must be a list")
    for n, artifact in enumerate(artifacts):
        if type(artifact) is not dict:
            raise ValueError(f"artifacts/{n} is not an object")
        file = artifact.get("file")
        if file is not None and (type(file) is not str or not ARTIFACT_FILE.fullmatch(file)):
            raise ValueError(f"artifacts/{n}/file {file!r:.80} is not a plain file name ({ARTIFACT_FILE.pattern})")


@dataclass(slots=True)
class CaseRow:
    """One case of the merged report: identity, status, metric outcomes and where its files are.

    Folding several files into one row gives the same row whatever order they are read in:
    metrics and paths stay sorted, and a metric found with different outcomes keeps the worst.
    """

    session: str
    suite: str
    case_id: str
    kind: str
    status: str
    metrics: list[MetricRow]
    errors: list[str]
    paths: list[str]
    duration_s: float
    files: int = 1
    #: Distinct file contents seen, once a second file was folded in (duplicates = files - len).
    contents: set[tuple[object, ...]] | None = None
    #: Metric name -> every outcome found for it, for metrics whose files disagree.
    conflicts: dict[str, set[MetricOutcome]] | None = None
    #: The tool-eval proposal's index fields: ``case.tool_id`` and ``inference.status`` (None when absent).
    tool_id: str | None = None
    inference_status: str | None = None
    #: Under ``--evaljig-repeats``: attempt -> metric name -> its result in that attempt (``metrics`` folds them).
    attempts: dict[int, dict[str, MetricRow]] | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.session, self.suite, self.case_id)

    @property
    def duplicates(self) -> int:
        """Files of this case whose content another of its files already had."""
        return self.files - len(self.contents) if self.contents else 0

    @classmethod
    def from_doc(cls, doc: Any, path: str) -> CaseRow:
        """The row of a parsed ``case.json``; ``ValueError`` says why it cannot be merged.

        This is the fast subset of the JSON Schema a merge relies on (full validation costs
        ~200 µs a file; ``evaljig-report merge --validate`` does it too). The status is derived from
        the metrics and errors; the caller compares it with the file's stated ``status``.
        """
        try:
            if doc["schema_version"] != SCHEMA_VERSION:
                raise ValueError(f"schema_version {doc['schema_version']!r} is not {SCHEMA_VERSION}")
            source = doc["source"]
            session, suite, case_id = source["session"], source["suite"], source["case_id"]
            if not (type(session) is str and type(suite) is str and type(case_id) is str):
                raise ValueError("source session, suite and case_id must be strings")
            metrics: list[MetricRow] = []
            total = 0.0
            for m in doc["metrics"]:  # the rules of outcome_of, inlined: this runs for every metric of every file
                name, mstatus, score, duration = m["name"], m["status"], m.get("score"), m.get("duration_s") or 0.0
                if type(name) is not str or mstatus not in METRIC_STATUSES:
                    raise ValueError(f"metric {name!r} has status {mstatus!r}")
                if type(score) is not float and (type(score) is not int):
                    score = None
                total += duration  # TypeError when it is not a number
                reason = "" if mstatus == "pass" else _short(m.get("reason"))
                metrics.append(MetricRow(name, mstatus, score, reason, duration))
            errors = doc["errors"]
            if type(errors) is not list:
                raise ValueError("errors must be a list")
            _check_artifacts(doc["artifacts"])
            kind = doc.get("kind", "eval")
            attempt = source.get("attempt")
            if attempt is not None and (type(attempt) is not int or attempt < 1):
                raise ValueError(f"source attempt {attempt!r:.40} is not a whole number >= 1")
        except (KeyError, TypeError) as exc:
            raise ValueError(f"missing or malformed field {exc}") from None
        if len(metrics) > 1:
            metrics.sort(key=_name)
        attempts = None if attempt is None else {attempt: {m.name: m for m in metrics}}
        if attempts is not None:
            metrics = aggregate_attempts(attempts)
        return cls(
            session,
            suite,
            case_id,
            str(kind),
            case_status((m.status for m in metrics), bool(errors)),  # derived: the file's own status is not trusted
            metrics,
            [_short(e) for e in errors],
            [path],
            total,
            tool_id=_text_field(doc.get("case"), "tool_id"),
            inference_status=_inference_status(doc.get("inference")),
            attempts=attempts,
        )

    def _content(self) -> tuple[object, ...]:
        tried = tuple(sorted(self.attempts)) if self.attempts else ()
        return (tuple((m.name, *m.outcome) for m in self.metrics), tuple(self.errors), tried)

    def absorb(self, other: CaseRow) -> None:
        """Fold in the same case found in another (single) file: its metrics, errors and path join this row."""
        if self.contents is None:
            self.contents = {self._content()}
        self.contents.add(other._content())
        self.files += 1
        if self.attempts is not None or other.attempts is not None:
            self._absorb_attempts(other)
        else:
            self.metrics = self._joined({m.name: m for m in self.metrics}, other.metrics)
        self.errors = sorted({*self.errors, *other.errors})
        self.paths = sorted({*self.paths, *other.paths})
        self.kind = min(self.kind, other.kind)
        self.tool_id = _least(self.tool_id, other.tool_id)
        self.inference_status = _least(self.inference_status, other.inference_status)
        self.duration_s = math.fsum(m.duration_s for m in self.metrics)
        self.status = case_status((m.status for m in self.metrics), bool(self.errors))

    def _joined(self, kept: dict[str, MetricRow], metrics: Iterable[MetricRow]) -> list[MetricRow]:
        """``kept`` plus ``metrics``; a metric in both with different outcomes is a conflict and the worse is kept."""
        for metric in metrics:
            known = kept.get(metric.name)
            if known is not None and known.outcome != metric.outcome:
                self._conflict(metric.name, known.outcome, metric.outcome)
            kept[metric.name] = metric if known is None else _worst(known, metric)
        return sorted(kept.values(), key=_name)

    def _absorb_attempts(self, other: CaseRow) -> None:
        """Repeats of one case: each attempt's metrics are joined, then folded into runs and passes.

        A file without an attempt (a crashed case written by the xdist controller) joins as attempt 0.
        """
        mine = self.attempts if self.attempts is not None else {0: {m.name: m for m in self.metrics}}
        theirs = other.attempts if other.attempts is not None else {0: {m.name: m for m in other.metrics}}
        for attempt, metrics in theirs.items():
            joined = self._joined(dict(mine.get(attempt, {})), metrics.values())
            mine[attempt] = {m.name: m for m in joined}
        self.attempts = {a: m for a, m in mine.items() if m or a != 0}
        self.metrics = aggregate_attempts(self.attempts)

    def _conflict(self, name: str, *outcomes: MetricOutcome) -> None:
        if self.conflicts is None:
            self.conflicts = {}
        self.conflicts.setdefault(name, set()).update(outcomes)

    def conflict_notes(self) -> list[str]:
        """One line per metric whose files disagree: every outcome found, and the one kept."""
        notes = []
        for name, outcomes in sorted((self.conflicts or {}).items()):
            found = sorted(outcomes, key=_outcome_key)
            notes.append(
                f"metric {name!r} has different results in this case's files "
                f"({'; '.join(describe_outcome(o) for o in found)}); kept the worst: {describe_outcome(found[0])}"
            )
        return notes

    def why(self) -> str:
        """The short reason a case did not pass."""
        parts = list(self.errors)
        parts += [f"{m.name}: {m.reason}" if m.reason else m.name for m in self.metrics if m.status == "fail"]
        if not parts and self.status == "skip":
            parts = [m.reason for m in self.metrics if m.reason][:1]
        return "; ".join(parts)


def aggregate_attempts(attempts: dict[int, dict[str, MetricRow]]) -> list[MetricRow]:
    """One row per metric over every attempt: runs (attempts that did not skip), passes, pass^k status.

    The status is ``fail`` when any attempt failed (pass^k: every run must pass), ``pass`` when all that
    ran passed, ``skip`` when none ran; the score is the mean over the attempts that ran and have one; the
    reason is the first failing attempt's, naming it. The compare gate reads runs and passes, not the status.
    """
    by_name: dict[str, list[tuple[int, MetricRow]]] = {}
    for attempt in sorted(attempts):
        for metric in attempts[attempt].values():
            by_name.setdefault(metric.name, []).append((attempt, metric))
    rows = []
    for name, tried in sorted(by_name.items()):
        runs = sum(m.status != "skip" for _, m in tried)
        passes = sum(m.status == "pass" for _, m in tried)
        failed = [(a, m) for a, m in tried if m.status == "fail"]
        status = "fail" if failed else "pass" if passes else "skip"
        ran = [m for _, m in tried if m.status != "skip"] or [m for _, m in tried]
        scores = [m.score for m in ran if m.score is not None]
        score = math.fsum(scores) / len(scores) if scores else None
        if failed:
            attempt, first = failed[0]
            reason = _short(f"{passes} of {runs} runs passed; attempt {attempt}: {first.reason}")
        elif status == "skip":
            reason = tried[0][1].reason
        else:
            reason = ""
        duration = math.fsum(m.duration_s for _, m in tried)
        rows.append(MetricRow(name, status, score, reason, duration, runs, passes))
    return rows


def _inference_status(inference: object) -> str | None:
    """index.json's ``inference_status``: the tool's own ``status``, ``unknown`` when it returned none.

    The record keeps only what the tool returned, so the default lives here, not in ``case.json``.
    """
    if type(inference) is not dict:
        return None
    return _text_field(inference, "status") or UNKNOWN_INFERENCE_STATUS


def _text_field(section: object, key: str) -> str | None:
    value = section.get(key) if type(section) is dict else None
    return _short(value) if type(value) is str else None


def _least(a: str | None, b: str | None) -> str | None:
    """Of two files' values, the same one whatever order they are read in (``error`` sorts before ``success``)."""
    return b if a is None else a if b is None else min(a, b)


def status_counts(rows: Iterable[CaseRow]) -> dict[str, int]:
    counts = dict.fromkeys(("pass", "fail", "error", "skip"), 0)
    for row in rows:
        counts[row.status] += 1
    return counts
