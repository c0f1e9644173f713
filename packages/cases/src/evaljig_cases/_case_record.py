"""The recording contract with the reporter: one ``CaseRecord`` per metric, in the case item's ``user_properties``.

A case's item appends, for each metric, ``(RECORD_KEY, record)`` where ``record`` is
``CaseRecord.model_dump(mode="json")``: plain JSON values only, so it survives xdist's report
serialization and junitxml unchanged.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from evaljig_cases._eval_case import EvalCase
from evaljig_cases._metrics import MetricResult
from evaljig_common import RECORD_KEY, valid_text


class CaseRecord(BaseModel):
    """What one metric of a case reports: which suite and case, what the tool returned, how the metric judged it."""

    model_config = ConfigDict(extra="forbid")

    suite: str
    """The test class node id, e.g. ``tests/test_x.py::TestCodeTool``."""
    case_id: str
    case: EvalCase
    inference: dict[str, Any] | None
    """The tool's output as JSON; may hold ``artifacts: [{name, mime_type, base64}]``. None when the tool raised."""
    metric: MetricResult
    error: str | None = None
    """Set when the tool or the metric raised; the metric status is then ``fail``."""
    error_source: Literal["tool", "metric"] | None = None
    """Which one raised: a tool error is the same for every metric of the case (reports show it once)."""
    traceback: str | None = None
    """The user frames of that exception (file, line, code; no local variables)."""
    duration_s: float | None = None
    """How long the metric took to score: every metric of a case shares one item, so its duration is not theirs."""

    attempt: int | None = None
    """Which repeat of the case this is (1..``attempts``) under ``--evaljig-repeats``; None for a single run."""
    attempts: int | None = None
    """How many repeats the case has (K); None for a single run."""

    def to_property(self) -> tuple[str, dict[str, Any]]:
        """The ``(key, value)`` pair appended to ``item.user_properties``."""
        return RECORD_KEY, valid_text(self.model_dump(mode="json"))

    @model_serializer(mode="wrap")
    def _single_run_unchanged(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A single run records exactly what it did before repeats existed: no ``attempt`` keys."""
        data: dict[str, Any] = handler(self)
        if self.attempt is None:
            data.pop("attempt", None)
            data.pop("attempts", None)
        return data
