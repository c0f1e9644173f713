"""pydantic-ai #2287's code-defined cases, run with only ``GenericBaseCase`` replaced by ``CodeCase``.

The example below is the issue's: an intermediate ``BaseCase(..., ABC)``, one class per case whose data
comes from lazy builder methods, ``BaseCase.cases()`` handed to a ``Dataset``. The singleton metaclass it
needed is gone: ``cases()`` caches one ``pydantic_evals.Case`` per class instead.
"""

from __future__ import annotations

from abc import ABC
from collections import Counter
from dataclasses import dataclass, field

import pytest
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import EqualsExpected, Evaluator, EvaluatorContext

from evaljig_cases import CodeCase, DuplicateCaseError, collect_cases
from evaljig_cases._evals_bridge import private_event_loop

BUILT: Counter[str] = Counter()
"""How often each builder ran: builders are lazy and run once per case, not once per ``cases()`` call."""


# --- the example; `GenericBaseCase` -> `CodeCase` is the only change --------------------------


@dataclass
class CaseMetadata:
    difficulty: str = "easy"
    tags: list[str] = field(default_factory=list)


@dataclass
class IsNone(Evaluator[str, str | None, CaseMetadata]):
    def evaluate(self, ctx: EvaluatorContext[str, str | None, CaseMetadata]) -> bool:
        return ctx.output is None


class BaseCase(CodeCase[str, str | None, CaseMetadata], ABC):
    def _metadata(self) -> CaseMetadata:
        return CaseMetadata()


class HardCase(BaseCase, ABC):
    def _metadata(self) -> CaseMetadata:
        return CaseMetadata(difficulty="hard", tags=["trick"])


class Case_01(BaseCase):  # noqa: N801  (the issue's class names)
    def _inputs(self) -> str:
        BUILT["case-01"] += 1
        return "What is the capital of France?"

    def _expected_output(self) -> str | None:
        return "Paris"


class Case_02(BaseCase):  # noqa: N801
    def _inputs(self) -> str:
        BUILT["case-02"] += 1
        return "What is the capital of Liechtenstein?"

    def _expected_output(self) -> str | None:
        return "Vaduz"


class Case_03(HardCase):  # noqa: N801
    def _inputs(self) -> str:
        BUILT["case-03"] += 1
        return "What is the capital of Europe?"

    def _evaluators(self) -> list[Evaluator[str, str | None, CaseMetadata]]:
        return [IsNone()]


# --- evaljig's own form in the same family: class attributes -----------------------------------------


class CapitalOfJapan(BaseCase):
    inputs = "What is the capital of Japan?"
    expected_output = "Tokyo"


CAPITALS = {"France": "Paris", "Liechtenstein": "Vaduz", "Japan": "Tokyo"}


def answer(question: str) -> str | None:
    country = question.removeprefix("What is the capital of ").removesuffix("?")
    return CAPITALS.get(country)


def test_cases_are_real_pydantic_evals_cases_named_in_kebab_case() -> None:
    cases = BaseCase.cases()
    assert all(isinstance(c, Case) for c in cases)
    assert [c.name for c in cases] == ["case-01", "case-02", "case-03", "capital-of-japan"]
    assert [(c.inputs, c.expected_output) for c in cases] == [
        ("What is the capital of France?", "Paris"),
        ("What is the capital of Liechtenstein?", "Vaduz"),
        ("What is the capital of Europe?", None),
        ("What is the capital of Japan?", "Tokyo"),
    ]
    assert [c.metadata for c in cases][2:] == [CaseMetadata("hard", ["trick"]), CaseMetadata()]
    assert [type(e).__name__ for e in cases[2].evaluators] == ["IsNone"]


def test_abc_intermediates_are_not_cases() -> None:
    assert [c.name for c in HardCase.cases()] == ["case-03"]
    assert "HardCase" not in [c.name for c in collect_cases(BaseCase)]


def test_one_object_per_class_built_once() -> None:
    first, second = BaseCase.cases(), BaseCase.cases()
    assert all(a is b for a, b in zip(first, second, strict=True))
    assert HardCase.cases()[0] is first[2]
    assert BUILT == {"case-01": 1, "case-02": 1, "case-03": 1}


def test_builders_are_lazy() -> None:
    class Lazy(CodeCase[int, int, None], abstract=True):
        pass

    calls: list[str] = []

    class Answer(Lazy):
        def _inputs(self) -> int:
            calls.append("inputs")
            return 6 * 7

    assert calls == []  # defining the class builds nothing
    (case,) = collect_cases(Lazy)
    assert calls == []
    assert (case.inputs, case.inputs, case.expected_output) == (42, 42, None)
    assert calls == ["inputs"]


def test_dataset_of_cases_evaluates() -> None:
    dataset = Dataset(name="capitals", cases=BaseCase.cases(), evaluators=[EqualsExpected()])
    with private_event_loop():
        report = dataset.evaluate_sync(answer, progress=False)
    outcomes = {c.name: {name: r.value for name, r in c.assertions.items()} for c in report.cases}
    assert outcomes == {
        "case-01": {"EqualsExpected": True},
        "case-02": {"EqualsExpected": True},
        "case-03": {"IsNone": True},
        "capital-of-japan": {"EqualsExpected": True},
    }


def test_names_that_clash_once_kebab_cased_are_rejected() -> None:
    class Clash(CodeCase[int, int, None], ABC):
        pass

    class Case_One(Clash):  # noqa: N801
        inputs = 1

    class CaseOne(Clash):
        inputs = 1

    with pytest.raises(DuplicateCaseError, match=r"duplicate case name 'case-one' under .*Clash \(kebab-cased\)"):
        Clash.cases()
