"""Cases defined in code, pytest-class style: one subclass per case, registered when it is defined.

Each concrete subclass of a ``CodeCase`` base is one case named after the class. Registration happens
in ``__init_subclass__`` (no metaclass) into a registry keyed by every ``CodeCase`` ancestor, so ``collect_cases(Base)``
sees exactly the cases under ``Base``. Intermediates declared with ``abstract=True`` (or left with
abstract methods) are skipped.

Order is stable: by module name, then by definition order within the module. Re-executing a module
(a reload, or the same file imported under two names is *not* the same module) replaces a class with
the same ``module:qualname`` in place instead of duplicating it.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

from pydantic import ValidationError

from evaljig_cases.errors import DuplicateCaseError, describe_validation_error
from evaljig_cases.models import EvalCase, FunctionCall, Records

if TYPE_CHECKING:
    from pydantic_evals import Dataset
    from pydantic_evals.evaluators import Evaluator

InputsT = TypeVar("InputsT")
OutputT = TypeVar("OutputT")
MetadataT = TypeVar("MetadataT")
C = TypeVar("C", bound="CodeCase[Any, Any, Any]")

_REGISTRY: dict[type, dict[str, type[CodeCase[Any, Any, Any]]]] = {}
"""base class -> {"module:qualname" -> concrete case class}, in registration order."""
_SEQUENCE = itertools.count()


class CodeCase(Generic[InputsT, OutputT, MetadataT]):
    """Typed base for code-defined cases: subclasses set ``inputs`` and optionally the other three."""

    inputs: InputsT
    expected_output: OutputT | None = None
    metadata: MetadataT | None = None
    evaluators: Sequence[Evaluator[InputsT, OutputT, MetadataT]] = ()

    _evaljig_seq: ClassVar[int]

    def __init_subclass__(cls, *, abstract: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._evaljig_seq = next(_SEQUENCE)
        if abstract or _has_abstract_methods(cls):
            return
        if not hasattr(cls, "inputs"):
            raise TypeError(f"case {cls.__module__}.{cls.__qualname__} sets no inputs (or pass abstract=True)")
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
    def to_pydantic_evals(
        cls,
        *,
        name: str | None = None,
        evaluators: Sequence[Evaluator[InputsT, OutputT, MetadataT]] = (),
    ) -> Dataset[InputsT, OutputT, MetadataT]:
        """The cases under this base as a ``pydantic_evals.Dataset`` (imported only when called)."""
        from evaljig_cases.evals_bridge import to_pydantic_evals

        return to_pydantic_evals(cls, name=name, evaluators=evaluators)


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
        if not abstract and not _has_abstract_methods(cls):
            cls.inputs = cls.build_eval_case()
            cls.expected_output = dict(cls.expectations)
            cls.metadata = {"tool_id": cls.tool_id, "description": cls.inputs.description}
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
