"""The pydantic-evals bridge on plain code-defined cases: a real Dataset, run with ``evaluate_sync``."""
# cases are declared as class attributes, pytest-class style

from __future__ import annotations

from dataclasses import dataclass

from pydantic_evals import Dataset
from pydantic_evals.evaluators import EqualsExpected, Evaluator, EvaluatorContext

from evaljig_cases import (
    CodeCase,
    EvalCase,
    FunctionCall,
    Inference,
    Metric,
    MetricEvaluator,
    MetricResult,
    collect_cases,
    to_pydantic_evals,
)
from evaljig_cases._evals_bridge import private_event_loop


@dataclass
class IsEven(Evaluator[list[int], int, dict[str, str]]):
    def evaluate(self, ctx: EvaluatorContext[list[int], int, dict[str, str]]) -> bool:
        return ctx.output % 2 == 0


class Sums(CodeCase[list[int], int, dict[str, str]], abstract=True):
    """Sums of integer lists; inputs are built with code."""

    metadata = {"family": "sums"}


class FirstTen(Sums):
    inputs = list(range(1, 11))
    expected_output = 55


class Evens(Sums):
    inputs = [2 * i for i in range(5)]
    expected_output = 20
    evaluators = (IsEven(),)


class WrongOnPurpose(Sums):
    inputs = [1, 1]
    expected_output = 3


def test_dataset_mirrors_collect_cases() -> None:
    dataset = Sums.to_pydantic_evals(evaluators=[EqualsExpected()])
    assert isinstance(dataset, Dataset)
    assert dataset.name == "Sums"
    names = ["FirstTen", "Evens", "WrongOnPurpose"]
    assert [c.name for c in dataset.cases] == [c.name for c in collect_cases(Sums)] == names
    assert [(c.inputs, c.expected_output, c.metadata) for c in dataset.cases][1] == (
        [0, 2, 4, 6, 8],
        20,
        {"family": "sums"},
    )
    assert [type(e).__name__ for e in dataset.cases[1].evaluators] == ["IsEven"]
    assert to_pydantic_evals(Sums, name="renamed").name == "renamed"


def test_evaluate_sync_scores_every_case() -> None:
    dataset = Sums.to_pydantic_evals(evaluators=[EqualsExpected()])
    with private_event_loop():
        report = dataset.evaluate_sync(sum, progress=False)
    assertions = {case.name: {k: v.value for k, v in case.assertions.items()} for case in report.cases}
    assert assertions == {
        "FirstTen": {"EqualsExpected": True},
        "Evens": {"IsEven": True, "EqualsExpected": True},
        "WrongOnPurpose": {"EqualsExpected": False},
    }
    text = report.render(width=100, include_durations=False)
    assert "Evaluation Summary: sum" in text
    assert "WrongOnPurpose" in text


class Closeness(Metric):
    def evaluate(self, case: EvalCase, inference: Inference) -> MetricResult:
        score = 1.0 / (1 + abs(inference["answer"] - case.expectations["answer"]))
        return self.passed(score=score) if score == 1.0 else self.failed("off", score=score)


def test_data_cases_take_numeric_scores_into_pydantic_evals() -> None:
    data = [
        EvalCase(id="exact", tool_id="calc", function_call=FunctionCall(name="add"), expectations={"answer": 4}),
        EvalCase(id="off-by-three", tool_id="calc", function_call=FunctionCall(name="add"), expectations={"answer": 7}),
    ]
    dataset = to_pydantic_evals(data, name="calc", evaluators=[MetricEvaluator(Closeness())])
    with private_event_loop():
        report = dataset.evaluate_sync(lambda case: {"answer": 4}, progress=False)
    scores = {case.name: {k: v.value for k, v in case.scores.items()} for case in report.cases}
    verdicts = {case.name: {k: v.value for k, v in case.assertions.items()} for case in report.cases}
    assert scores == {"exact": {"closeness_score": 1.0}, "off-by-three": {"closeness_score": 0.25}}
    assert verdicts == {"exact": {"closeness": True}, "off-by-three": {"closeness": False}}
