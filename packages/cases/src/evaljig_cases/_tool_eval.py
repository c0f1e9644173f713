"""The tool-eval pytest base class: one tool run per (test class, case), one pytest item per metric.

Subclass ``ToolEval`` in a ``Test*`` class, set ``cases`` and ``metrics``, implement ``run_tool``. The
inherited ``test_metric`` is parametrized over cases (class scope) and metrics, so pytest orders items by
case and the class-scoped ``evaljig_run`` fixture runs the tool once per case, with the declared
``patches`` active from before the tool runs until the case's last metric item is done.

Under xdist, with ``--evaljig-schedule-by-case`` (or the ini option ``evaljig_schedule_by_case``),
the reporter plugin schedules all items of one case (recognised by the ``evaljig_case`` parameter)
on one worker when ``--dist load`` (``-n``'s default) is used, so the tool runs exactly once per
(class, case) while different cases spread over the workers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, Literal

import pytest

from evaljig_cases._case_record import CaseRecord
from evaljig_cases._eval_case import EvalCase
from evaljig_cases._loading import ensure_unique_ids
from evaljig_cases._metrics import Metric, MetricResult
from evaljig_cases._tool_id_check import ToolClass, register
from evaljig_cases._tool_run import ToolOutput, ToolRun, describe_exception, run_tool, user_traceback
from evaljig_common import valid_text

#: ``"package.module.attribute" -> factory(case) -> replacement``, applied with ``MonkeyPatch.setattr``.
PatchFactory = Callable[[EvalCase], object]


class ToolEval:
    """Base for tool-eval test classes (not collected itself: its name does not start with ``Test``)."""

    cases: ClassVar[Sequence[EvalCase]] = ()
    metrics: ClassVar[Sequence[Metric]] = ()
    tool_id: ClassVar[str | None] = None
    """When set, only cases with this ``tool_id`` run in the class."""
    patches: ClassVar[Mapping[str, PatchFactory]] = {}

    def run_tool(self, case: EvalCase) -> Any:
        """Run the tool on ``case`` and return a mapping or pydantic model; may be ``async def``."""
        raise NotImplementedError(f"{type(self).__qualname__} must implement run_tool(self, case)")

    @classmethod
    def selected_cases(cls) -> list[EvalCase]:
        """The class's cases (filtered by ``tool_id``), checked for duplicate ids."""
        chosen = [c for c in cls.cases if cls.tool_id is None or c.tool_id == cls.tool_id]
        ensure_unique_ids(chosen)
        return chosen

    @classmethod
    @contextmanager
    def patched(cls, case: EvalCase) -> Iterator[None]:
        """Apply the declared ``patches`` for ``case``; everything is restored on exit."""
        with pytest.MonkeyPatch.context() as mp:
            for target, factory in cls.patches.items():
                mp.setattr(target, factory(case))
            yield

    @classmethod
    def run_case(cls, case: EvalCase) -> ToolRun:
        """Patch, run the tool once and restore: what the fixture does, usable outside pytest."""
        with cls.patched(case):
            return cls._run(case)

    @classmethod
    def _run(cls, case: EvalCase) -> ToolRun:
        tool: Callable[[EvalCase], ToolOutput] = cls().run_tool
        return run_tool(tool, case)

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Parametrize ``test_metric`` over cases (class-scoped, so items group by case) and metrics."""
        if "evaljig_case" not in metafunc.fixturenames:
            return
        cases = self.selected_cases()
        metrics = list(self.metrics)
        names = [m.name for m in metrics]
        if len(set(names)) != len(names):
            raise ValueError(f"{type(self).__qualname__}: metric names must be unique, got {names}")
        module = metafunc.definition.getparent(pytest.Module)
        class_nodeid = metafunc.definition.nodeid.rsplit("::", 1)[0]
        tool_class = ToolClass(module.nodeid if module else class_nodeid, self.tool_id, tuple(self.cases))
        register(metafunc.config, class_nodeid, tool_class)  # checked once the session is collected
        metafunc.parametrize("evaljig_case", cases, ids=[c.id for c in cases], scope="class")
        metafunc.parametrize("evaljig_metric", metrics, ids=names)

    @pytest.fixture(scope="class")
    @classmethod
    def evaljig_run(cls, request: pytest.FixtureRequest, evaljig_case: EvalCase) -> Iterator[ToolRun]:
        """The one tool run for this (class, case); the patches stay active until the case's items finish."""
        owner: type[ToolEval] = request.cls or cls
        with owner.patched(evaljig_case):
            yield owner._run(evaljig_case)

    def test_metric(self, request: pytest.FixtureRequest, evaljig_run: ToolRun, evaljig_metric: Metric) -> None:
        """One metric on one case: the whole body is the recorded evaluation."""
        evaluate_and_record(request.node, evaljig_run, evaljig_metric)


def evaluate_and_record(item: pytest.Item, run: ToolRun, metric: Metric) -> MetricResult:
    """Judge ``run`` with ``metric``, append the ``CaseRecord`` to ``item.user_properties``, then pass/fail/skip."""
    source: Literal["tool", "metric"] = "tool"
    error, trace = run.error, run.traceback
    if error is not None:
        result = MetricResult(name=metric.name, status="fail", score=None, reason=f"tool raised: {error}")
    else:
        assert run.inference is not None
        try:
            result = metric.measure(run.case, run.inference)
        except Exception as exc:
            error, source, trace = describe_exception(exc), "metric", user_traceback(exc)
            result = MetricResult(name=metric.name, status="fail", score=None, reason=f"metric raised: {error}")
    record = CaseRecord(
        suite=suite_of(item),
        case_id=run.case.id,
        case=run.case,
        inference=run.inference,
        metric=result,
        error=error,
        error_source=source if error is not None else None,
        traceback=trace if error is not None else None,
    )
    item.user_properties.append(record.to_property())
    if result.status == "fail":
        shown = f"\n\n{trace}" if error is not None and trace else ""  # --tb shows where the tool or metric raised
        pytest.fail(valid_text(f"{result.name}: {result.reason or 'failed'}{shown}"), pytrace=False)
    if result.status == "skip":
        pytest.skip(valid_text(f"{result.name}: {result.reason or 'skipped'}"))
    return result


def suite_of(item: pytest.Item) -> str:
    """The node id of the item's test class (``path::Class``), or of its module for a plain function."""
    parent = item.getparent(pytest.Class) or item.getparent(pytest.Module)
    return parent.nodeid if parent is not None else item.nodeid
