"""Metrics: one question asked of a tool's output, answered as pass / fail / skip with a score and a reason."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from evaljig_cases._eval_case import EvalCase

MetricStatus = Literal["pass", "fail", "skip"]

#: What a tool returned, as JSON-able data (what metrics see and what reports store).
Inference = Mapping[str, Any]


class MetricResult(BaseModel):
    """The outcome of one metric on one case."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    status: MetricStatus
    score: float | None = None
    reason: str = ""


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


class Metric:
    """Subclass and implement ``evaluate`` or ``evaluate_async``; ``name`` defaults to the snake-cased class name."""

    name: str = "metric"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = _snake(cls.__name__)

    def evaluate(self, case: EvalCase, inference: Inference) -> MetricResult:
        """Judge ``inference`` against ``case`` (synchronous metrics override this)."""
        raise NotImplementedError

    async def evaluate_async(self, case: EvalCase, inference: Inference) -> MetricResult:
        """Judge ``inference`` against ``case`` (asynchronous metrics override this)."""
        raise NotImplementedError

    def is_async(self) -> bool:
        """True when the subclass implements ``evaluate_async``."""
        return type(self).evaluate_async is not Metric.evaluate_async

    def measure(self, case: EvalCase, inference: Inference) -> MetricResult:
        """Run whichever of ``evaluate``/``evaluate_async`` the subclass implements (no running loop needed)."""
        if self.is_async():
            return self._checked(asyncio.run(self.evaluate_async(case, inference)))
        return self._checked(self._evaluate_sync(case, inference))

    async def measure_async(self, case: EvalCase, inference: Inference) -> MetricResult:
        """``measure`` for callers that already run an event loop."""
        if self.is_async():
            return self._checked(await self.evaluate_async(case, inference))
        return self._checked(self._evaluate_sync(case, inference))

    def _evaluate_sync(self, case: EvalCase, inference: Inference) -> object:
        if type(self).evaluate is Metric.evaluate:
            raise TypeError(f"{type(self).__qualname__} implements neither evaluate nor evaluate_async")
        return self.evaluate(case, inference)

    def _checked(self, result: object) -> MetricResult:
        """Reports key results by metric name: a result under another name could overwrite another metric's."""
        if not isinstance(result, MetricResult):
            raise TypeError(f"{type(self).__qualname__} returned {type(result).__name__}, expected MetricResult")
        if result.name != self.name:
            raise ValueError(
                f"{type(self).__qualname__} returned a MetricResult named {result.name!r}, but the metric is named "
                f"{self.name!r} (use self.passed/failed/skipped, or MetricResult(name=self.name, ...))"
            )
        return result

    def passed(self, reason: str = "", score: float = 1.0) -> MetricResult:
        return MetricResult(name=self.name, status="pass", score=score, reason=reason)

    def failed(self, reason: str, score: float = 0.0) -> MetricResult:
        return MetricResult(name=self.name, status="fail", score=score, reason=reason)

    def skipped(self, reason: str) -> MetricResult:
        return MetricResult(name=self.name, status="skip", score=None, reason=reason)

    def __repr__(self) -> str:
        return f"<metric {self.name}>"
