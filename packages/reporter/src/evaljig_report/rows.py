"""The small per-case summary a merge keeps in memory (details stay on disk)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from evaljig_report.casefile import case_status
from evaljig_report.schema import CASE_STATUSES, METRIC_STATUSES, SCHEMA_VERSION

#: Reasons and errors kept in a row are cut to this many characters (full text stays in case.json).
MAX_ROW_TEXT = 300

#: (name, status, score, reason) — reason kept only for metrics that did not pass.
Metric = tuple[str, str, float | None, str]


def _short(text: object) -> str:
    s = "" if text is None else str(text)
    return s if len(s) <= MAX_ROW_TEXT else s[: MAX_ROW_TEXT - 1] + "…"


@dataclass(slots=True)
class CaseRow:
    """One case of the merged report: identity, status, metric outcomes and where its files are."""

    session: str
    suite: str
    case_id: str
    kind: str
    status: str
    metrics: list[Metric]
    errors: list[str]
    paths: list[str]
    duration_s: float

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.session, self.suite, self.case_id)

    @classmethod
    def from_doc(cls, doc: Any, path: str) -> CaseRow:
        """The row of a parsed ``case.json``; ``ValueError`` says why it cannot be merged.

        This is the fast subset of the JSON Schema a merge relies on (full validation costs
        ~200 µs a file; ``evaljig-report merge --validate`` does it too).
        """
        try:
            if doc["schema_version"] != SCHEMA_VERSION:
                raise ValueError(f"schema_version {doc['schema_version']!r} is not {SCHEMA_VERSION}")
            source = doc["source"]
            session, suite, case_id = source["session"], source["suite"], source["case_id"]
            if not (type(session) is str and type(suite) is str and type(case_id) is str):
                raise ValueError("source session, suite and case_id must be strings")
            status = doc["status"]
            if status not in CASE_STATUSES:
                raise ValueError(f"status {status!r} is not one of {', '.join(CASE_STATUSES)}")
            metrics: list[Metric] = []
            duration = 0.0
            for m in doc["metrics"]:
                name, mstatus, score = m["name"], m["status"], m.get("score")
                if type(name) is not str or mstatus not in METRIC_STATUSES:
                    raise ValueError(f"metric {name!r} has status {mstatus!r}")
                if type(score) is not float and (type(score) is not int):
                    score = None
                metrics.append((name, mstatus, score, "" if mstatus == "pass" else _short(m.get("reason"))))
                duration += m.get("duration_s") or 0.0
            errors = doc["errors"]
            if type(errors) is not list or type(doc["artifacts"]) is not list:
                raise ValueError("artifacts and errors must be lists")
            kind = doc.get("kind", "eval")
        except (KeyError, TypeError) as exc:
            raise ValueError(f"missing or malformed field {exc}") from None
        return cls(
            session, suite, case_id, str(kind), status, metrics, [_short(e) for e in errors], [path], float(duration)
        )

    def absorb(self, other: CaseRow) -> bool:
        """Fold in the same case found in another file; False when it added nothing (a duplicate)."""
        known = {m[0] for m in self.metrics}
        new = [m for m in other.metrics if m[0] not in known]
        if not new:
            return False
        self.metrics.extend(new)
        self.errors.extend(e for e in other.errors if e not in self.errors)
        self.paths.extend(p for p in other.paths if p not in self.paths)
        self.duration_s += other.duration_s
        self.status = case_status((m[1] for m in self.metrics), bool(self.errors))
        return True

    def why(self) -> str:
        """The short reason a case did not pass."""
        parts = list(self.errors)
        parts += [
            f"{name}: {reason}" if reason else name for name, status, _, reason in self.metrics if status == "fail"
        ]
        if not parts and self.status == "skip":
            parts = [reason for _, _, _, reason in self.metrics if reason][:1]
        return "; ".join(parts)


def status_counts(rows: Iterable[CaseRow]) -> dict[str, int]:
    counts = dict.fromkeys(("pass", "fail", "error", "skip"), 0)
    for row in rows:
        counts[row.status] += 1
    return counts
