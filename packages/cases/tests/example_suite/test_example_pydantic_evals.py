"""The code-defined example cases as a real pydantic-evals Dataset, run with ``evaluate_sync``."""

from __future__ import annotations

import re
from typing import Any

from evaljig_cases import EvalCase, MetricEvaluator, load_cases, to_pydantic_evals
from evaljig_cases._evals_bridge import private_event_loop

from .code_cases import CodeToolCase
from .suite import CASES_DIR, METRICS, CodeToolEval


def code_tool(case: EvalCase) -> dict[str, Any]:
    """The pydantic-evals task: the same patched, single tool run the pytest suite does."""
    run = CodeToolEval.run_case(case)
    if run.error is not None:
        raise RuntimeError(run.error)
    assert run.inference is not None
    return run.inference


def normalized(report_text: str) -> str:
    """Durations are the only volatile part of a report: blank any that slip in; drop trailing spaces."""
    text = re.sub(r"\d+(\.\d+)?\s?(µs|us|ms|s)\b", "<duration>", report_text)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def test_dataset_holds_the_code_cases_in_order() -> None:
    dataset = CodeToolCase.to_pydantic_evals()
    assert dataset.name == "CodeToolCase"
    assert [c.name for c in dataset.cases] == ["DailyMean", "WeekdayTotals", "SquaresTo20"]
    first = dataset.cases[0]
    assert isinstance(first.inputs, EvalCase)
    assert first.inputs.function_call.name == "column_mean"
    assert first.expected_output == first.inputs.expectations
    assert first.metadata == {"tool_id": "code", "description": "Mean of a generated 30-day series."}


def test_evaluate_sync_prints_the_report(golden: Any) -> None:
    dataset = CodeToolCase.to_pydantic_evals(evaluators=[MetricEvaluator(m) for m in METRICS])
    # one case at a time: the task patches a module attribute while it runs
    with private_event_loop():
        report = dataset.evaluate_sync(code_tool, max_concurrency=1, progress=False)

    assert not report.failures
    assert {case.name: sorted(case.assertions) for case in report.cases} == {
        name: ["answer_within_tolerance", "artifact_presence", "function_name_match"]
        for name in ("DailyMean", "WeekdayTotals", "SquaresTo20")
    }
    assert all(result.value is True for case in report.cases for result in case.assertions.values())
    text = report.render(width=120, include_durations=False, include_reasons=True)
    assert golden == normalized(text)


def test_data_cases_from_yaml_and_json_run_with_scores() -> None:
    data_cases = load_cases(CASES_DIR)
    dataset = to_pydantic_evals(data_cases, evaluators=[MetricEvaluator(m) for m in METRICS])
    assert dataset.name == "cases"
    assert [c.name for c in dataset.cases] == [c.id for c in data_cases]
    assert dataset.cases[0].inputs is data_cases[0]
    assert dataset.cases[0].expected_output == data_cases[0].expectations
    with private_event_loop():
        report = dataset.evaluate_sync(code_tool, max_concurrency=1, progress=False)
    assert not report.failures
    for case in report.cases:  # a metric that skips (no numeric expectation) reports nothing
        assert {"artifact_presence", "function_name_match"} <= set(case.assertions)
        assert {k: v.value for k, v in case.scores.items()} == {f"{name}_score": 1.0 for name in case.assertions}
    assert any("answer_within_tolerance_score" in case.scores for case in report.cases)
