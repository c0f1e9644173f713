"""A worker's recorder: folds contract records into cases, writes them, then the worker index."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import orjson

from evaljig_common import write_bytes_atomic
from evaljig_report._attachments import write_attachments
from evaljig_report._casefile import CaseState, coerce_metric, dumps, jsonable
from evaljig_report._layout import COLLECTED_FILE, INDEX_FILE, Layout
from evaljig_report._proposal import failed_inference
from evaljig_report._schema import SCHEMA_VERSION

#: The metric a plain (non-contract) test is recorded with.
PYTEST_METRIC = "pytest"


def split_nodeid(nodeid: str) -> tuple[str, str]:
    """``pkg/test_x.py::TestA::test_b[1]`` -> (``pkg/test_x.py::TestA``, ``test_b[1]``)."""
    suite, sep, name = nodeid.rpartition("::")
    return (suite, name) if sep else ("", nodeid)


def record_case_key(record: object, nodeid: str) -> tuple[str, str]:
    """The (suite, case_id) a record is filed under; the test's node id fills in what the record lacks."""
    fields: Mapping[str, Any] = record if isinstance(record, Mapping) else {}
    default_suite, default_id = split_nodeid(nodeid)
    suite = str(fields["suite"]) if isinstance(fields.get("suite"), str) else default_suite
    case_id = fields.get("case_id")
    return suite, case_id if isinstance(case_id, str) and case_id else default_id or "case"


def record_attempt(record: object) -> int | None:
    """The repeat a record belongs to (``attempt``, 1..K under ``--evaljig-repeats K``); None for a single run."""
    attempt = record.get("attempt") if isinstance(record, Mapping) else None
    return attempt if type(attempt) is int and attempt >= 1 else None


def metric_duration(recorded: object, item_duration: float) -> float:
    """The record's own ``duration_s`` when it is a usable number, else the item's call duration.

    A ``ToolEval`` case scores every metric in one item, so each record says how long its metric took.
    """
    if type(recorded) in (int, float) and math.isfinite(cast(float, recorded)) and cast(float, recorded) >= 0:
        return float(cast(float, recorded))
    return max(0.0, float(item_duration))


class Recorder:
    """Cases of one worker; every record rewrites that case's ``case.json`` atomically."""

    def __init__(self, layout: Layout, *, validate: bool = True) -> None:
        self.layout = layout
        self.validate = validate
        #: (suite, case_id, attempt) -> the case (one repeat of it under ``--evaljig-repeats``).
        self._cases: dict[tuple[str, str, int | None], CaseState] = {}

    def __len__(self) -> int:
        return len(self._cases)

    def _state(self, suite: str, case_id: str, kind: str, attempt: int | None = None) -> CaseState:
        key = (suite, case_id, attempt)
        state = self._cases.get(key)
        if state is None:
            state = CaseState(suite, case_id, kind, self.layout.case_dir(suite, case_id, attempt), attempt=attempt)
            self._cases[key] = state
        return state

    def add_record(self, record: object, *, nodeid: str = "", duration: float = 0.0) -> Path:
        """One ``evaljig.case`` record (one metric of one case); a malformed record becomes an error.

        So does a record that cannot be stored: whatever a tool returned, the test run goes on.
        """
        fields: Mapping[str, Any] = record if isinstance(record, Mapping) else {}
        suite, case_id = record_case_key(record, nodeid)
        errors: list[str] = []
        if not isinstance(fields.get("case_id"), str) or not fields["case_id"]:
            errors.append(f"record without a case_id: {record!r:.300}")
        state = self._state(suite, case_id, "eval", record_attempt(record))
        if state.attempt is not None and type(fields.get("attempts")) is int:
            state.attempts = fields["attempts"]
        try:
            self._fold(state, fields, errors, nodeid=nodeid, duration=duration)
        except Exception as exc:
            errors.append(f"record of {nodeid or case_id} could not be stored: {type(exc).__name__}: {exc}")
        state.errors.extend(e for e in errors if e not in state.errors)
        return state.write(self.layout, validate=self.validate)

    @staticmethod
    def _fold(state: CaseState, fields: Mapping[str, Any], errors: list[str], *, nodeid: str, duration: float) -> None:
        if not state.case and isinstance(fields.get("case"), Mapping):
            case = jsonable(fields["case"])
            state.case = case if "case_id" in case else {"case_id": case.get("id", state.case_id), **case}
        inference = fields.get("inference")
        if inference is None and fields.get("error"):
            inference = failed_inference()
        state.set_inference(inference)
        metric, problem = coerce_metric(fields.get("metric"))
        errors += [problem] if problem else []
        error = fields.get("error")
        if error:
            # ``error_source: tool``: one tool run failed every metric of the case; say so once, not per metric
            from_tool = fields.get("error_source") == "tool"
            errors.append(f"tool raised: {error}" if from_tool else f"{metric['name']}: {error}")
            if isinstance(fields.get("traceback"), str) and fields["traceback"]:
                where = "tool" if from_tool else f"metric:{metric['name']}"
                state.add_traceback(where, str(error), fields["traceback"])
        duration = metric_duration(fields.get("duration_s"), duration)
        metric.update(nodeid=nodeid, duration_s=duration, error=str(error) if error else None)
        state.add_metric(metric)

    def add_plain(
        self, *, nodeid: str, status: str, reason: str = "", duration: float = 0.0, error: str | None = None
    ) -> Path:
        """A test without the contract, recorded as a case with the single metric ``pytest``."""
        suite, name = split_nodeid(nodeid)
        state = self._state(suite, name, "pytest")
        if not state.case:
            state.case = {"case_id": name, "nodeid": nodeid}
        state.add_metric(
            {
                "name": PYTEST_METRIC,
                "status": status,
                "score": None,
                "reason": reason,
                "nodeid": nodeid,
                "duration_s": max(0.0, duration),
                "error": error,
            }
        )
        if error and error not in state.errors:
            state.errors.append(error)
        # Built entirely from pytest's report, so the shape is known: skip the ~200 µs validation.
        return state.write(self.layout, validate=False)

    def add_crash(self, *, suite: str, case_id: str, kind: str, nodeid: str, error: str) -> Path:
        """A case whose test process died: an ``error`` case with no metric (written by the xdist controller)."""
        state = self._state(suite, case_id, kind)
        if not state.case:
            state.case = {"case_id": case_id, "nodeid": nodeid}
        if error not in state.errors:
            state.errors.append(error)
        return state.write(self.layout, validate=False)

    def attach(
        self, suite: str, case_id: str, attachments: Sequence[object], attempt: int | None = None
    ) -> Path | None:
        """Files a test attached (``ATTACHMENT_KEY``) join its case's artifacts; None if that case was not recorded."""
        state = self._cases.get((suite, case_id, attempt))
        if state is None:
            return None
        written, errors = write_attachments(state.directory, attachments, state.names)
        state.artifacts.extend(written)
        state.errors.extend(e for e in errors if e not in state.errors)
        return state.write(self.layout, validate=self.validate)

    def write_index(self, *, always: bool = False) -> Path | None:
        """The worker index (every case this worker wrote); nothing when it recorded nothing, unless ``always``.

        A worker that wrote ``collected.json`` always writes its index: its absence tells a merge the worker died.
        """
        if not self._cases and not always:
            return None
        rows = [
            {
                "suite": s.suite,
                "case_id": s.case_id,
                "kind": s.kind,
                "status": s.status,
                "path": s.path.relative_to(self.layout.worker_dir).as_posix(),
                "metrics": len(s.metrics),
                **({"attempt": s.attempt} if s.attempt is not None else {}),
            }
            for s in self._cases.values()
        ]
        index = {
            "schema_version": SCHEMA_VERSION,
            "kind": "worker",
            "run": self.layout.run,
            "session": self.layout.session,
            "worker": self.layout.worker,
            "totals": dict(Counter(r["status"] for r in rows)),
            "cases": rows,
        }
        path = self.layout.worker_dir / INDEX_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, dumps(index, indent=True))
        return path


def write_session_index(layout: Layout) -> Path | None:
    """The session index: one row per worker index found under the session folder."""
    workers: list[dict[str, Any]] = []
    for worker_index in sorted(layout.session_dir.glob(f"*/{INDEX_FILE}")):
        try:
            data = jsonable_load(worker_index)
        except (OSError, ValueError) as exc:
            workers.append({"worker": worker_index.parent.name, "index": None, "problem": str(exc)})
            continue
        workers.append(
            {
                "worker": worker_index.parent.name,
                "index": worker_index.relative_to(layout.session_dir).as_posix(),
                "cases": len(data.get("cases", [])),
                "totals": data.get("totals", {}),
            }
        )
    for collected in sorted(layout.session_dir.glob(f"*/{COLLECTED_FILE}")):
        if not (collected.parent / INDEX_FILE).exists():
            problem = "no index.json: the worker did not finish (it crashed or was killed)"
            workers.append({"worker": collected.parent.name, "index": None, "problem": problem})
    workers.sort(key=lambda w: str(w["worker"]))
    if not workers:
        return None
    totals: Counter[str] = Counter()
    for w in workers:
        totals.update(w.get("totals") or {})
    index = {
        "schema_version": SCHEMA_VERSION,
        "kind": "session",
        "run": layout.run,
        "session": layout.session,
        "totals": dict(totals),
        "workers": workers,
    }
    path = layout.session_dir / INDEX_FILE
    write_bytes_atomic(path, dumps(index, indent=True))
    return path


def jsonable_load(path: Path) -> dict[str, Any]:
    """Read a JSON object from ``path`` (``ValueError`` if it is not one)."""
    data = orjson.loads(path.read_bytes())
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a JSON object")
    return data
