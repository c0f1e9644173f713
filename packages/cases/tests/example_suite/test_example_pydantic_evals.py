"""The code-defined example cases as a real pydantic-evals Dataset, run with ``evaluate_sync``."""

from __future__ import annotations

import re
from typing import Any

from evaljig_cases import EvalCase, MetricEvaluator, private_event_loop

from .code_cases import CodeToolCase
from .suite import METRICS, CodeToolEval


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
