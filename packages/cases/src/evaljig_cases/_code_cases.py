"""Cases defined in code, pytest-class style: one subclass per case, registered when it is defined.

Each concrete subclass of a ``CodeCase`` base is one case named after the class. Registration happens
in ``__init_subclass__`` (no metaclass) into a registry keyed by every ``CodeCase`` ancestor, so ``collect_cases(Base)``
sees exactly the cases under ``Base``. Intermediates declared with ``abstract=True``, listing ``ABC`` among
their bases (pydantic-ai #2287's convention) or left with abstract methods are skipped.

A case gives its data as class attributes (``inputs = ...``) or as lazy builder methods (``_inputs()``,
``_expected_output()``, ``_metadata()``, ``_evaluators()``, as in #2287), called once per instance on
first use. ``Base.cases()`` returns #2287's view: one ``pydantic_evals.Case`` per concrete class.

Order is stable: by module name, then by definition order within the module. Re-executing a module
(a reload, or the same file imported under two names is *not* the same module) replaces a class with
the same ``module:qualname`` in place instead of duplicating it.
"""

from __future__ import annotations

import inspect
import itertools
import re
from abc import ABC
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

from pydantic import ValidationError

from evaljig_cases._errors import DuplicateCaseError, describe_validation_error
from evaljig_cases._eval_case import EvalCase, FunctionCall, Records

if TYPE_CHECKING:
    from pydantic_evals import Case, Dataset
    from pydantic_evals.evaluators import Evaluator

InputsT = TypeVar("InputsT")
OutputT = TypeVar("OutputT")
MetadataT = TypeVar("MetadataT")
C = TypeVar("C", bound="CodeCase[Any, Any, Any]")

_REGISTRY: dict[type, dict[str, type[CodeCase[Any, Any, Any]]]] = {}
"""base class -> {"module:qualname" -> concrete case class}, in registration order."""
_SEQUENCE = itertools.count()


_PE_CASE = "_evaljig_pydantic_evals_case"
"""Class attribute caching the class's ``pydantic_evals.Case`` (read from the class's own ``__dict__`` only)."""


class CodeCase(Generic[InputsT, OutputT, MetadataT]):
    """Typed base for code-defined cases: subclasses set ``inputs`` and optionally the other three.

    Each of the four may instead be built by a method (``_inputs()`` ...): a class attribute of the same
    name in a subclass wins over the builder, so both forms mix freely.
    """

    _evaljig_seq: ClassVar[int]

    @cached_property
    def inputs(self) -> InputsT:
        return self._inputs()

    @cached_property
    def expected_output(self) -> OutputT | None:
        return self._expected_output()

    @cached_property
    def metadata(self) -> MetadataT | None:
        return self._metadata()

    @cached_property
    def evaluators(self) -> Sequence[Evaluator[InputsT, OutputT, MetadataT]]:
        return self._evaluators()

    def _inputs(self) -> InputsT:
        """Build the inputs (lazy: called on first use); override when they are easier to compute than to type."""
        raise TypeError(f"case {_where(type(self))} sets no inputs")

    def _expected_output(self) -> OutputT | None:
        return None

    def _metadata(self) -> MetadataT | None:
        return None

    def _evaluators(self) -> Sequence[Evaluator[InputsT, OutputT, MetadataT]]:
        return ()

    def __init_subclass__(cls, *, abstract: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._evaljig_seq = next(_SEQUENCE)
        if _is_intermediate(cls, abstract):
            return
        if isinstance(inspect.getattr_static(cls, "inputs"), cached_property) and cls._inputs is CodeCase._inputs:
            raise TypeError(
                f"case {cls.__module__}.{cls.__qualname__} sets no inputs (or pass abstract=True): set `inputs`, "
                "define `_inputs()`, or list ABC among the bases of an intermediate class"
            )
        key = f"{cls.__module__}:{cls.__qualname__}"
        for base in cls.__mro__[1:]:
            if isinstance(base, type) and issubclass(base, CodeCase):
                previous = _REGISTRY.setdefault(base, {}).get(key)
                if previous is not None:
                    cls._evaljig_seq = previous._evaljig_seq
                _REGISTRY[base][key] = cls

    @classmethod
    def case_name(cls) -> str:
        """The case's name: the class name, unless a subclass overrides this."""
        return cls.__name__

    @property
    def name(self) -> str:
        return self.case_name()

    @classmethod
    def cases(cls) -> list[Case[InputsT, OutputT, MetadataT]]:
        """pydantic-ai #2287's entry point: one ``pydantic_evals.Case`` per concrete case under this class.

        Each is built once per class (the same object on every call) and named ``kebab_name(case_name())``,
        so ``Case_01`` is ``case-01``; ``Dataset(cases=Base.cases(), ...)`` takes them as they are.
        """
        from pydantic_evals import Case

        built: list[Case[InputsT, OutputT, MetadataT]] = []
        cases = collect_cases(cls)
        ensure_unique_names([kebab_name(case.name) for case in cases], cls)
        for case in cases:
            cached = type(case).__dict__.get(_PE_CASE)
            if cached is None:
                cached = Case(
                    name=kebab_name(case.name),
                    inputs=case.inputs,
                    expected_output=case.expected_output,
                    metadata=case.metadata,
                    evaluators=list(case.evaluators),
                )
                setattr(type(case), _PE_CASE, cached)
            built.append(cached)
        return built

    @classmethod
    def to_pydantic_evals(
        cls,
        *,
        name: str | None = None,
        evaluators: Sequence[Evaluator[InputsT, OutputT, MetadataT]] = (),
    ) -> Dataset[InputsT, OutputT, MetadataT]:
        """The cases under this base as a ``pydantic_evals.Dataset`` (imported only when called), named after the base.

        Each case is named by ``case_name()`` (unlike ``cases()``, which kebab-cases the names).
        """
        from pydantic_evals import Case, Dataset

        cases = [
            Case(
                name=case.name,
                inputs=case.inputs,
                expected_output=case.expected_output,
                metadata=case.metadata,
                evaluators=list(case.evaluators),
            )
            for case in collect_cases(cls)
        ]
        return Dataset(name=name or cls.__name__, cases=cases, evaluators=evaluators)


def collect_cases(base: type[C]) -> list[C]:
    """One instance of every concrete case under ``base``: by module name, then definition order."""
    classes = sorted(_REGISTRY.get(base, {}).values(), key=lambda c: (c.__module__, c._evaljig_seq))
    cases = [cast(C, c()) for c in classes]  # registered under ``base``, so instances of it
    seen: dict[str, C] = {}
    for case in cases:
        first = seen.setdefault(case.name, case)
        if first is not case:
            raise DuplicateCaseError(
                f"duplicate case name {case.name!r} under {base.__qualname__}: "
                f"{_where(type(first))} and {_where(type(case))}",
                case=case.name,
            )
    return cases


def kebab_name(name: str) -> str:
    """``Case_01`` -> ``case-01``, ``CapitalOfFrance`` -> ``capital-of-france``: #2287's case names."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name)
    return re.sub(r"[\s_\-]+", "-", spaced).strip("-").lower()


def ensure_unique_names(names: Sequence[str], base: type) -> None:
    """Two classes whose names differ only in case or separators (``Case_01``, ``Case01``) clash once kebab-cased."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise DuplicateCaseError(f"duplicate case name {name!r} under {base.__qualname__} (kebab-cased)", case=name)
        seen.add(name)


def _is_intermediate(cls: type, abstract: bool) -> bool:
    """Not a case itself: declared ``abstract=True``, lists ``ABC`` among its bases, or has abstract methods."""
    return abstract or ABC in cls.__bases__ or _has_abstract_methods(cls)


def _has_abstract_methods(cls: type) -> bool:
    """``@abstractmethod`` left unimplemented (checked by hand: ABCMeta sets its flag only after this hook)."""
    return any(getattr(getattr(cls, name, None), "__isabstractmethod__", False) for name in dir(cls))


def _where(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


class ToolCase(CodeCase[EvalCase, dict[str, Any], dict[str, Any]], abstract=True):
    """A code-defined tool case: set ``tool_id``, ``function_call`` and friends; ``inputs`` is the built ``EvalCase``.

    The docstring becomes the case description. The ``EvalCase`` is built (and validated) when the class
    is defined, so a bad case fails at import naming the class. Its pydantic-evals input is the whole
    ``EvalCase``, so a task can install the case's artifact mocks before calling the tool.
    """

    tool_id: ClassVar[str]
    function_call: ClassVar[FunctionCall]
    expectations: ClassVar[dict[str, Any]] = {}
    artifact_mocks: ClassVar[dict[str, Records]] = {}

    def __init_subclass__(cls, *, abstract: bool = False, **kwargs: Any) -> None:
        if not _is_intermediate(cls, abstract):
            case = cls.build_eval_case()
            # class attributes (readable on the class too, as before builders existed): setattr, because
            # the base declares these names as lazily built properties
            setattr(cls, "inputs", case)  # noqa: B010
            setattr(cls, "expected_output", dict(cls.expectations))  # noqa: B010
            setattr(cls, "metadata", {"tool_id": cls.tool_id, "description": case.description})  # noqa: B010
        super().__init_subclass__(abstract=abstract, **kwargs)

    @classmethod
    def build_eval_case(cls) -> EvalCase:
        """The ``EvalCase`` for this class; override to build parts of it with code."""
        missing = [a for a in ("tool_id", "function_call") if not hasattr(cls, a)]
        if missing:
            raise TypeError(f"tool case {_where(cls)} must set {', '.join(missing)} (or pass abstract=True)")
        try:
            case = EvalCase(
                id=cls.case_name(),
                description=inspect.cleandoc(cls.__doc__ or ""),
                tool_id=cls.tool_id,
                function_call=cls.function_call,
                expectations=dict(cls.expectations),
                artifact_mocks=dict(cls.artifact_mocks),
            )
        except ValidationError as exc:
            raise TypeError(f"tool case {_where(cls)}: {describe_validation_error(exc)}") from exc
        return case.with_source(_where(cls))

    def to_eval_case(self) -> EvalCase:
        return self.inputs


def eval_cases(base: type[ToolCase]) -> list[EvalCase]:
    """The ``EvalCase`` of every tool case under ``base``, in ``collect_cases`` order."""
    return [case.to_eval_case() for case in collect_cases(base)]
