"""Cases defined in code: registration on definition, abstract intermediates, stable order, ToolCase."""
# cases are declared as class attributes, pytest-class style

from __future__ import annotations

import abc
from typing import Any

import pytest

from evaljig_cases import CodeCase, DuplicateCaseError, EvalCase, FunctionCall, ToolCase, collect_cases, eval_cases


def define(name: str, base: type, module: str, **attrs: Any) -> type:
    """A case class as if written in ``module`` (order depends on the module name)."""
    return type(name, (base,), {"__module__": module, "__qualname__": name, **attrs})


def test_subclasses_register_on_definition_named_after_the_class() -> None:
    class Arithmetic(CodeCase[tuple[int, int], int, dict[str, str]], abstract=True):
        pass

    class OnePlusOne(Arithmetic):
        inputs = (1, 1)
        expected_output = 2
        metadata = {"kind": "sum"}

    (case,) = collect_cases(Arithmetic)
    assert isinstance(case, OnePlusOne)
    assert (case.name, case.inputs, case.expected_output, case.metadata, case.evaluators) == (
        "OnePlusOne",
        (1, 1),
        2,
        {"kind": "sum"},
        (),
    )


def test_abstract_intermediates_are_skipped() -> None:
    class Root(CodeCase[int, int, None], abstract=True):
        pass

    class Family(Root, abstract=True):
        expected_output = 0

    class WithAbstractMethod(Root):
        @abc.abstractmethod
        def build(self) -> int: ...

    class Zero(Family):
        inputs = 0

    class Concrete(WithAbstractMethod):
        inputs = 1

        def build(self) -> int:
            return 1

    assert [c.name for c in collect_cases(Root)] == ["Zero", "Concrete"]
    assert [c.name for c in collect_cases(Family)] == ["Zero"]
    assert collect_cases(WithAbstractMethod)[0].name == "Concrete"


def test_registry_is_per_base() -> None:
    class Left(CodeCase[int, int, None], abstract=True):
        pass

    class Right(CodeCase[int, int, None], abstract=True):
        pass

    define("L1", Left, __name__, inputs=1)
    define("R1", Right, __name__, inputs=2)
    assert [c.name for c in collect_cases(Left)] == ["L1"]
    assert [c.name for c in collect_cases(Right)] == ["R1"]


def test_order_is_module_name_then_definition_order() -> None:
    class Base(CodeCase[int, int, None], abstract=True):
        pass

    define("Second", Base, "suite_b", inputs=1)
    define("First", Base, "suite_b", inputs=1)
    define("Zulu", Base, "suite_a", inputs=1)
    define("Alpha", Base, "suite_a", inputs=1)
    assert [c.name for c in collect_cases(Base)] == ["Zulu", "Alpha", "Second", "First"]


def test_redefining_a_class_replaces_it_in_place() -> None:
    class Base(CodeCase[int, int, None], abstract=True):
        pass

    define("A", Base, "mod", inputs=1)
    define("B", Base, "mod", inputs=2)
    define("A", Base, "mod", inputs=3)  # e.g. the module was executed again
    assert [(c.name, c.inputs) for c in collect_cases(Base)] == [("A", 3), ("B", 2)]


def test_same_name_in_two_modules_is_rejected() -> None:
    class Base(CodeCase[int, int, None], abstract=True):
        pass

    define("Twin", Base, "mod_a", inputs=1)
    define("Twin", Base, "mod_b", inputs=2)
    with pytest.raises(DuplicateCaseError, match=r"duplicate case name 'Twin' under .*Base: mod_a:Twin and mod_b:Twin"):
        collect_cases(Base)


def test_a_concrete_case_must_set_inputs() -> None:
    class Base(CodeCase[int, int, None], abstract=True):
        pass

    with pytest.raises(TypeError, match=r"sets no inputs \(or pass abstract=True\)"):

        class Forgot(Base):
            expected_output = 1


def test_case_name_can_be_overridden() -> None:
    class Base(CodeCase[int, int, None], abstract=True):
        pass

    class Ugly(Base):
        inputs = 1

        @classmethod
        def case_name(cls) -> str:
            return "pretty-name"

    assert collect_cases(Base)[0].name == "pretty-name"


def test_tool_case_builds_a_validated_eval_case() -> None:
    class Tools(ToolCase, abstract=True):
        tool_id = "code"

    class MeanOfThree(Tools):
        """Mean of a table
        built in code."""

        artifact_mocks = {"t": [{"v": v} for v in (1, 2, 3)]}
        function_call = FunctionCall(name="mean", args={"table": "t"})
        expectations = {"answer": 2.0}

    (case,) = collect_cases(Tools)
    assert case.inputs == EvalCase(
        id="MeanOfThree",
        description="Mean of a table\nbuilt in code.",
        tool_id="code",
        function_call=FunctionCall(name="mean", args={"table": "t"}),
        expectations={"answer": 2.0},
        artifact_mocks={"t": [{"v": 1}, {"v": 2}, {"v": 3}]},
    )
    assert case.inputs.source == f"{__name__}:{MeanOfThree.__qualname__}"
    assert case.expected_output == {"answer": 2.0}
    assert case.metadata == {"tool_id": "code", "description": "Mean of a table\nbuilt in code."}
    assert eval_cases(Tools) == [case.inputs]


def test_bad_tool_case_fails_at_definition_naming_the_class() -> None:
    class Tools(ToolCase, abstract=True):
        tool_id = "code"

    with pytest.raises(TypeError, match=r"tool case .*:.*NoCall must set function_call"):

        class NoCall(Tools):
            pass

    with pytest.raises(TypeError, match=r"tool case .*BadMocks: artifact_mocks\.t: Input should be a valid list"):

        class BadMocks(Tools):
            function_call = FunctionCall(name="f")
            artifact_mocks = {"t": "not records"}  # type: ignore[dict-item]


def test_tool_case_data_stays_readable_on_the_class() -> None:
    class Tools(ToolCase, abstract=True):
        tool_id = "code"

    class Squares(Tools):
        """Squares."""

        function_call = FunctionCall(name="sum_of_squares", args={"n": 3})
        expectations = {"answer": 14}

    assert isinstance(Squares.inputs, EvalCase)
    assert Squares.expected_output == {"answer": 14}
    assert Squares.metadata == {"tool_id": "code", "description": "Squares."}
    assert collect_cases(Tools)[0].inputs is Squares.inputs
