"""One case's report: metrics from several test items folded into one ``case.json``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from evaljig_report import atomic
from evaljig_report.artifacts import NameRegistry, write_artifacts
from evaljig_report.layout import CASE_FILE, Layout
from evaljig_report.schema import METRIC_STATUSES, SCHEMA_VERSION, schema_errors

_DUMP_OPTS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _fallback(value: object) -> str:
    return repr(value)


def jsonable(value: object) -> Any:
    """A plain-JSON copy of ``value`` (unknown objects become their repr; the test cannot mutate it later)."""
    return orjson.loads(orjson.dumps(value, default=_fallback, option=_DUMP_OPTS))


def dumps(doc: object, *, indent: bool = False) -> bytes:
    """Serialise for a report file (UTF-8 JSON, unknown objects as their repr)."""
    return orjson.dumps(doc, default=_fallback, option=_DUMP_OPTS | (orjson.OPT_INDENT_2 if indent else 0))


def case_status(metric_statuses: Iterable[str], has_errors: bool) -> str:
    """error beats fail beats pass beats skip; a case with no metric at all is a skip."""
    if has_errors:
        return "error"
    statuses = set(metric_statuses)
    if "fail" in statuses:
        return "fail"
    return "pass" if "pass" in statuses else "skip"


def coerce_metric(raw: object) -> tuple[dict[str, Any], str | None]:
    """A schema-shaped metric from the contract's ``metric`` dict, and a problem with it if any."""
    metric = raw if isinstance(raw, Mapping) else {}
    name = metric.get("name")
    status = metric.get("status")
    score = metric.get("score")
    problem = None
    if not isinstance(name, str) or not name:
        name, problem = "metric", f"metric without a name: {raw!r:.200}"
    if status not in METRIC_STATUSES:
        problem = f"metric {name!r} has status {status!r}, expected pass, fail or skip"
        status = "fail"
    if isinstance(score, bool) or not isinstance(score, int | float):
        score = None
    reason = metric.get("reason")
    return {"name": name, "status": status, "score": score, "reason": "" if reason is None else str(reason)}, problem


@dataclass
class CaseState:
    """Everything recorded so far for one (suite, case_id) on this worker."""

    suite: str
    case_id: str
    kind: str
    directory: Path
    case: dict[str, Any] = field(default_factory=dict)
    inference: dict[str, Any] | None = None
    metrics: list[dict[str, Any]] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    names: NameRegistry = field(default_factory=NameRegistry)
    inference_seen: bool = False

    @property
    def path(self) -> Path:
        return self.directory / CASE_FILE

    @property
    def status(self) -> str:
        return case_status((m["status"] for m in self.metrics), bool(self.errors))

    def set_inference(self, inference: object) -> None:
        """Keep the first inference seen; its artifacts become files, the rest stays JSON."""
        if self.inference_seen or inference is None:
            return
        self.inference_seen = True
        if not isinstance(inference, Mapping):
            self.inference = {"value": jsonable(inference)}
            return
        raw_artifacts = inference.get("artifacts")
        self.inference = jsonable({k: v for k, v in inference.items() if k != "artifacts"})
        self.artifacts, errors = write_artifacts(self.directory, raw_artifacts, self.names)
        self.errors.extend(errors)

    def add_metric(self, metric: dict[str, Any]) -> None:
        """A metric recorded again (a rerun) replaces the earlier one of the same name."""
        self.metrics = [m for m in self.metrics if m["name"] != metric["name"]]
        self.metrics.append(metric)

    def document(self, layout: Layout) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": self.kind,
            "source": {
                "run": layout.run,
                "session": layout.session,
                "worker": layout.worker,
                "suite": self.suite,
                "case_id": self.case_id,
            },
            "status": self.status,
            "case": self.case,
            "inference": self.inference,
            "metrics": self.metrics,
            "artifacts": self.artifacts,
            "errors": self.errors,
            "updated_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        }

    def write(self, layout: Layout, *, validate: bool = True) -> Path:
        """Atomically (re)write ``case.json``; a schema violation is recorded on the case, never raised."""
        doc = self.document(layout)
        if validate and (problems := schema_errors(doc)):
            self.errors.extend(e for e in (f"schema: {p}" for p in problems) if e not in self.errors)
            doc = self.document(layout)
        self.directory.mkdir(parents=True, exist_ok=True)
        atomic.write_bytes(self.path, dumps(doc, indent=True))
        return self.path
