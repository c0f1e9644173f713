"""Metrics: sync or async implementations, result helpers, names."""

from __future__ import annotations

import asyncio

import pytest

from evaljig_cases import EvalCase, FunctionCall, Inference, Metric, MetricResult

CASE = EvalCase(id="c", tool_id="t", function_call=FunctionCall(name="f"))


class ExactAnswer(Metric):
    def evaluate(self, case: EvalCase, inference: Inference) -> MetricResult:
        return self.passed("same") if inference.get("answer") == 1 else self.failed("different")


class AsyncAnswer(Metric):
    name = "async_answer_v2"

    async def evaluate_async(self, case: EvalCase, inference: Inference) -> MetricResult:
        await asyncio.sleep(0)
        return self.skipped("nothing to compare") if "answer" not in inference else self.passed(score=0.5)


class Misnamed(Metric):
    def evaluate(self, case: EvalCase, inference: Inference) -> MetricResult:
        return MetricResult(name="accuracy", status="pass", score=1.0)


class AsyncMisnamed(Metric):
    async def evaluate_async(self, case: EvalCase, inference: Inference) -> MetricResult:
        return MetricResult(name="accuracy", status="pass", score=1.0)


class Unimplemented(Metric):
    pass


class ReturnsBool(Metric):
    def evaluate(self, case: EvalCase, inference: Inference) -> MetricResult:
        return True  # type: ignore[return-value]


def test_names_default_to_snake_case_of_the_class() -> None:
    assert ExactAnswer().name == "exact_answer"
    assert AsyncAnswer().name == "async_answer_v2"


def test_sync_metric() -> None:
    assert ExactAnswer().measure(CASE, {"answer": 1}) == MetricResult(
        name="exact_answer", status="pass", score=1.0, reason="same"
    )
    assert ExactAnswer().measure(CASE, {"answer": 2}).model_dump() == {
        "name": "exact_answer",
        "status": "fail",
        "score": 0.0,
        "reason": "different",
    }


def test_async_metric_runs_with_or_without_a_loop() -> None:
    metric = AsyncAnswer()
    assert metric.is_async()
    assert metric.measure(CASE, {}) == MetricResult(name="async_answer_v2", status="skip", reason="nothing to compare")
    assert asyncio.run(metric.measure_async(CASE, {"answer": 3})).score == 0.5
    assert asyncio.run(ExactAnswer().measure_async(CASE, {"answer": 1})).status == "pass"


def test_a_metric_must_implement_something_and_return_a_result() -> None:
    with pytest.raises(TypeError, match="implements neither evaluate nor evaluate_async"):
        Unimplemented().measure(CASE, {})
    with pytest.raises(TypeError, match="returned bool, expected MetricResult"):
        ReturnsBool().measure(CASE, {})


@pytest.mark.parametrize("metric", [Misnamed(), AsyncMisnamed()], ids=["sync", "async"])
def test_a_result_under_another_name_is_refused(metric: Metric) -> None:
    """Two metrics both answering as "accuracy" would overwrite each other in the report."""
    message = (
        rf"{type(metric).__name__} returned a MetricResult named 'accuracy', "
        rf"but the metric is named '{metric.name}' \(use self.passed/failed/skipped"
    )
    with pytest.raises(ValueError, match=message):
        metric.measure(CASE, {})
    with pytest.raises(ValueError, match=message):
        asyncio.run(metric.measure_async(CASE, {}))
