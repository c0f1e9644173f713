"""Cases defined in code: inputs and expectations that are easier to compute than to type."""
# cases are declared as class attributes, pytest-class style

from __future__ import annotations

from evaljig_cases import FunctionCall, Records, ToolCase


def daily_series(days: int) -> Records:
    """A deterministic, slightly irregular series (a builder, so the expectation is computed, not typed)."""
    return [{"day": d, "amount": (d * 37) % 11 + 1} for d in range(1, days + 1)]


class CodeToolCase(ToolCase, abstract=True):
    """Intermediate base: every example case targets the code tool."""

    tool_id = "code"


class DailyMean(CodeToolCase):
    """Mean of a generated 30-day series."""

    artifact_mocks = {"daily": daily_series(30)}
    function_call = FunctionCall(name="column_mean", args={"table": "daily", "column": "amount"})
    expectations = {"answer": sum(r["amount"] for r in daily_series(30)) / 30, "tolerance": 1e-12}


class WeekdayTotals(CodeToolCase):
    """Totals per weekday over four generated weeks."""

    artifact_mocks = {"daily": [{**row, "weekday": row["day"] % 7} for row in daily_series(28)]}
    function_call = FunctionCall(name="group_sum", args={"table": "daily", "by": "weekday", "column": "amount"})
    expectations = {"function": "group_sum", "answer": sum(r["amount"] for r in daily_series(28))}


class SquaresTo20(CodeToolCase):
    """Sum of squares up to 20, checked against the closed form n(n+1)(2n+1)/6."""

    function_call = FunctionCall(name="sum_of_squares", args={"n": 20})
    expectations = {"answer": 20 * 21 * 41 // 6}
