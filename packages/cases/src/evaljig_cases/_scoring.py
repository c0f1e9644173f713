"""Score one tool run with every metric of its case, record each result, then pass, fail or skip the one item.

A case is one pytest item, so its tool runs once whatever schedules the items (xdist's ``--dist``
modes, pytest-split shards, a random order): no scheduler can hand half a case to another worker.
Each metric still gets its own record (and its own row in the report); the item's outcome sums
them up: it fails when any metric failed (the message lists each failed metric and why), is
skipped when every metric skipped, and passes otherwise.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import pytest

from evaljig_cases._case_record import CaseRecord
from evaljig_cases._metrics import Metric, MetricResult
from evaljig_cases._tool_run import ToolRun, describe_exception, user_traceback
from evaljig_common import valid_text


@dataclass(frozen=True)
class Scored:
    """One metric's verdict on the run, and what raised if the tool or the metric did."""

    result: MetricResult
    duration_s: float
    error: str | None = None
    error_source: Literal["tool", "metric"] | None = None
    traceback: str | None = None


def score(run: ToolRun, metric: Metric) -> Scored:
    """Judge ``run`` with ``metric``; a tool that raised fails every metric, a metric that raises fails itself."""
    if run.error is not None:
        result = MetricResult(name=metric.name, status="fail", score=None, reason=f"tool raised: {run.error}")
        return Scored(result, 0.0, run.error, "tool", run.traceback)
    assert run.inference is not None
    started = time.perf_counter()
    try:
        result = metric.measure(run.case, run.inference)
    except Exception as exc:
        error = describe_exception(exc)
        result = MetricResult(name=metric.name, status="fail", score=None, reason=f"metric raised: {error}")
        return Scored(result, time.perf_counter() - started, error, "metric", user_traceback(exc))
    return Scored(result, time.perf_counter() - started)


def record_of(item: pytest.Item, run: ToolRun, scored: Scored, attempt: tuple[int, int] | None = None) -> CaseRecord:
    """The contract record of one metric (what the reporter folds into ``case.json``).

    ``attempt`` is (repeat, K) under ``--evaljig-repeats K``; None records no attempt (a single run).
    """
    return CaseRecord(
        attempt=None if attempt is None else attempt[0],
        attempts=None if attempt is None else attempt[1],
        suite=suite_of(item),
        case_id=run.case.id,
        case=run.case,
        inference=run.inference,
        metric=scored.result,
        error=scored.error,
        error_source=scored.error_source,
        traceback=scored.traceback,
        duration_s=scored.duration_s,
    )


def evaluate_and_record(
    item: pytest.Item, run: ToolRun, metrics: Sequence[Metric], *, attempt: tuple[int, int] | None = None
) -> list[MetricResult]:
    """Judge ``run`` with every metric, append each ``CaseRecord`` to ``item.user_properties``, then decide the item.

    Every record is written before the item fails or skips, so the report holds every metric.
    """
    scored = [score(run, metric) for metric in metrics]
    for one in scored:
        item.user_properties.append(record_of(item, run, one, attempt).to_property())
    failed = [s for s in scored if s.result.status == "fail"]
    if failed:
        pytest.fail(valid_text(failure_message(run, failed, len(scored))), pytrace=False)
    if scored and all(s.result.status == "skip" for s in scored):
        pytest.skip(valid_text("; ".join(f"{s.result.name}: {s.result.reason or 'skipped'}" for s in scored)))
    return [s.result for s in scored]


def failure_message(run: ToolRun, failed: Sequence[Scored], total: int) -> str:
    """Which metrics failed and why, one line each; then where the tool or a metric raised (``--tb``)."""
    if run.error is not None:  # one tool run failed every metric: say it once
        names = ", ".join(s.result.name for s in failed)
        shown = f"\n\n{run.traceback}" if run.traceback else ""
        return f"case {run.case.id!r}: tool raised: {run.error} (every metric fails: {names}){shown}"
    lines = [f"case {run.case.id!r}: {len(failed)} of {total} metrics failed"]
    lines += [f"  {s.result.name}: {s.result.reason or 'failed'}" for s in failed]
    lines += [f"\n{s.result.name} raised:\n{s.traceback}" for s in failed if s.traceback]
    return "\n".join(lines)


def suite_of(item: pytest.Item) -> str:
    """The node id of the item's test class (``path::Class``), or of its module for a plain function."""
    parent = item.getparent(pytest.Class) or item.getparent(pytest.Module)
    return parent.nodeid if parent is not None else item.nodeid
