"""The tool-eval pytest base class: one pytest item per (test class, case), the tool run once inside it.

Subclass ``ToolEval`` in a ``Test*`` class, set ``cases`` and ``metrics``, implement ``run_tool``. The
inherited ``test_case`` is parametrized over the cases: its ``evaljig_run`` fixture runs the tool once,
with the declared ``patches`` active from before the tool runs until every metric has scored it, and
the item records one result per metric (``_scoring``).

A case is one item rather than one item per metric so that nothing which hands out items can divide
it: xdist's ``load``, ``worksteal``, ``loadscope`` and ``loadfile``, pytest-split's shards and a
random order all keep the case whole, and its tool runs exactly once per run, on the worker that
scores it. No scheduler of evaljig's is involved; xdist's own stays in charge. Under
``--evaljig-repeats K`` a case is K items, one per repeat, each running the tool once (``_repeats``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

import pytest

from evaljig_cases._eval_case import EvalCase
from evaljig_cases._loading import ensure_unique_ids
from evaljig_cases._metrics import Metric
from evaljig_cases._repeats import REPEAT_PARAM, repeat_id, repeats
from evaljig_cases._scoring import evaluate_and_record
from evaljig_cases._tool_id_check import ToolClass, register
from evaljig_cases._tool_run import ToolOutput, ToolRun, run_tool

#: ``"package.module.attribute" -> factory(case) -> replacement``, applied with ``MonkeyPatch.setattr``.
PatchFactory = Callable[[EvalCase], object]


class ToolEval:
    """Base for tool-eval test classes (not collected itself: its name does not start with ``Test``)."""

    cases: ClassVar[Sequence[EvalCase]] = ()
    metrics: ClassVar[Sequence[Metric]] = ()
    tool_id: ClassVar[str | None] = None
    """When set, only cases with this ``tool_id`` run in the class."""
    patches: ClassVar[Mapping[str, PatchFactory]] = {}
    repeat: int = 1
    """Which repeat of the case ``run_tool`` is running (1..K under ``--evaljig-repeats K``), e.g. to seed a fake."""

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
    def _run(cls, case: EvalCase, repeat: int = 1) -> ToolRun:
        instance = cls()
        instance.repeat = repeat
        tool: Callable[[EvalCase], ToolOutput] = instance.run_tool
        return run_tool(tool, case)

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Parametrize ``test_case`` over the cases: one item per case, whatever the number of metrics."""
        if "evaljig_case" not in metafunc.fixturenames:
            return
        cases = self.selected_cases()
        names = [m.name for m in self.metrics]
        if not names:
            raise ValueError(f"{type(self).__qualname__}: no metrics: a case needs at least one metric to be judged")
        if len(set(names)) != len(names):
            raise ValueError(f"{type(self).__qualname__}: metric names must be unique, got {names}")
        module = metafunc.definition.getparent(pytest.Module)
        class_nodeid = metafunc.definition.nodeid.rsplit("::", 1)[0]
        tool_class = ToolClass(module.nodeid if module else class_nodeid, self.tool_id, tuple(self.cases))
        register(metafunc.config, class_nodeid, tool_class)  # checked once the session is collected
        k = repeats(metafunc.config)
        if k == 1:  # exactly as without the option: one item per case, the case id as its id
            metafunc.parametrize("evaljig_case", cases, ids=[c.id for c in cases])
            return
        pairs = [(c, n) for c in cases for n in range(1, k + 1)]
        ids = [repeat_id(c.id, n, k) for c, n in pairs]
        metafunc.parametrize(("evaljig_case", REPEAT_PARAM), pairs, ids=ids)

    @pytest.fixture
    def evaljig_repeat(self) -> int:
        """The repeat this item runs (1..K under ``--evaljig-repeats K``); overridden by the parametrization."""
        return 1

    @pytest.fixture
    @classmethod
    def evaljig_run(
        cls, request: pytest.FixtureRequest, evaljig_case: EvalCase, evaljig_repeat: int
    ) -> Iterator[ToolRun]:
        """The one tool run of this (class, case, repeat); the patches stay active until every metric has scored it."""
        owner: type[ToolEval] = request.cls or cls
        with owner.patched(evaljig_case):
            yield owner._run(evaljig_case, evaljig_repeat)

    def test_case(self, request: pytest.FixtureRequest, evaljig_run: ToolRun, evaljig_repeat: int) -> None:
        """Every metric on one case (one repeat of it): the whole body is the recorded evaluation."""
        k = repeats(request.config)
        attempt = (evaljig_repeat, k) if k > 1 else None
        evaluate_and_record(request.node, evaljig_run, self.metrics, attempt=attempt)
