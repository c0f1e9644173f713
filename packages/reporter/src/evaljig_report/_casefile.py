"""One case's report: metrics from several test items folded into one ``case.json``."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from evaljig_common import valid_text, write_bytes_atomic
from evaljig_report._artifacts import NameRegistry, write_artifacts
from evaljig_report._layout import CASE_FILE, Layout
from evaljig_report._proposal import file_refs, parts_to_items, split_artifact_parts
from evaljig_report._schema import METRIC_STATUSES, SCHEMA_VERSION, schema_errors

_DUMP_OPTS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY
_INT64 = range(-(2**63), 2**64)  # what orjson writes
_DOUBLE_BITS = 1023  # larger integers overflow a double: readers (orjson) would reject the file
_MAX_DEPTH = 200
#: A traceback kept in case.json is cut to this many characters (its end: the frames nearest the error).
MAX_TRACEBACK = 8000


def _fallback(value: object) -> str:
    return repr(value)


def _plain(value: object, depth: int = 0) -> Any:
    """``value`` as data the stdlib ``json`` writes as valid UTF-8 JSON: the slow path for what orjson refuses.

    Lone surrogates become U+FFFD; integers beyond 64 bits stay exact (beyond a double's range,
    a note); non-finite floats become null and non-string keys text, as orjson would write them.
    """
    if depth > _MAX_DEPTH:
        return "<nested too deeply>"
    if isinstance(value, str):
        return valid_text(value)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if value in _INT64 or value.bit_length() <= _DOUBLE_BITS else f"<{value.bit_length()}-bit int>"
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {_plain(k if isinstance(k, str) else str(k)): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, depth + 1) for v in value]
    try:
        return orjson.loads(orjson.dumps(value, default=_fallback, option=_DUMP_OPTS))
    except TypeError:
        return _plain(repr(value))


def jsonable(value: object) -> Any:
    """A plain-JSON copy of ``value`` (unknown objects become their repr; the test cannot mutate it later)."""
    try:
        return orjson.loads(orjson.dumps(value, default=_fallback, option=_DUMP_OPTS))
    except TypeError:  # orjson.JSONEncodeError: a big int, a lone surrogate, a deep or odd structure
        return _plain(value)


def dumps(doc: object, *, indent: bool = False) -> bytes:
    """Serialise for a report file (UTF-8 JSON, unknown objects as their repr); never fails on the data."""
    try:
        return orjson.dumps(doc, default=_fallback, option=_DUMP_OPTS | (orjson.OPT_INDENT_2 if indent else 0))
    except TypeError:
        text = json.dumps(
            _plain(doc),
            ensure_ascii=False,
            allow_nan=False,
            default=_fallback,
            indent=2 if indent else None,
            separators=(",", ": ") if indent else (",", ":"),
        )
        return text.encode("utf-8")


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
    tracebacks: list[dict[str, str]] = field(default_factory=list)
    names: NameRegistry = field(default_factory=NameRegistry)
    inference_seen: bool = False
    #: Which repeat this is (1..``attempts``) under ``--evaljig-repeats``; None for a single run.
    attempt: int | None = None
    attempts: int | None = None

    @property
    def path(self) -> Path:
        return self.directory / CASE_FILE

    @property
    def status(self) -> str:
        return case_status((m["status"] for m in self.metrics), bool(self.errors))

    def set_inference(self, inference: object) -> None:
        """Keep the first inference seen; its artifacts become files, the rest stays JSON.

        Artifacts come from evaljig's ``artifacts`` list and from the proposal's ``function_response.artifact_parts``.
        Only what the tool returned is kept (no ``status`` or ``function_response`` it never gave): the
        HTML's "Actual" shows the record, and index.json says ``inference_status: unknown`` by itself.
        """
        if self.inference_seen or inference is None:
            return
        self.inference_seen = True
        if not isinstance(inference, Mapping):
            self.inference = {"value": jsonable(inference)}
            return
        raw_artifacts = inference.get("artifacts")
        rest, parts = split_artifact_parts({k: v for k, v in inference.items() if k != "artifacts"})
        self.inference = jsonable(rest)
        written, errors = write_artifacts(self.directory, raw_artifacts, self.names)
        if parts is not None:
            items, errors_of_parts = parts_to_items(parts)
            written_parts, errors_of_items = write_artifacts(self.directory, items, self.names)
            written += written_parts
            errors += errors_of_parts + errors_of_items
            response = self.inference.get("function_response")
            if isinstance(response, dict):
                response["artifacts"] = file_refs(written_parts)
        self.artifacts[:0] = written  # before anything a test attached earlier
        self.errors.extend(errors)

    def add_traceback(self, where: str, message: str, traceback: str) -> None:
        """Keep a tool or metric traceback once per case: the same error raised for every metric is one entry."""
        if len(traceback) > MAX_TRACEBACK:
            traceback = "…" + traceback[-(MAX_TRACEBACK - 1) :]
        if not any(t["message"] == message and t["traceback"] == traceback for t in self.tracebacks):
            self.tracebacks.append({"where": where, "message": message, "traceback": traceback})

    def add_metric(self, metric: dict[str, Any]) -> None:
        """A metric recorded again by the same test (a rerun) replaces the earlier one of the same name.

        Recorded by another test, it is an error on the case: silently replacing it could turn a failure into a pass.
        """
        for earlier in self.metrics:
            if earlier["name"] == metric["name"] and earlier.get("nodeid") != metric.get("nodeid"):
                error = (
                    f"metric {metric['name']!r} recorded by two tests, {earlier.get('nodeid')} ({earlier['status']}) "
                    f"and {metric.get('nodeid')} ({metric['status']}); only the later is kept"
                )
                self.errors.append(error)
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
                **({"attempt": self.attempt} if self.attempt is not None else {}),
                **({"attempts": self.attempts} if self.attempt is not None and self.attempts else {}),
            },
            "status": self.status,
            "case": self.case,
            "inference": self.inference,
            "metrics": self.metrics,
            "artifacts": self.artifacts,
            "errors": self.errors,
            **({"tracebacks": self.tracebacks} if self.tracebacks else {}),
            "updated_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        }

    def write(self, layout: Layout, *, validate: bool = True) -> Path:
        """Atomically (re)write ``case.json``; a schema violation is recorded on the case, never raised."""
        doc = self.document(layout)
        if validate and (problems := schema_errors(doc)):
            self.errors.extend(e for e in (f"schema: {p}" for p in problems) if e not in self.errors)
            doc = self.document(layout)
        self.directory.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(self.path, dumps(doc, indent=True))
        return self.path
