"""The pydantic-evals bridge: code-defined cases as a ``pydantic_evals.Dataset``, metrics as evaluators.

Kept in its own module because importing pydantic_evals costs seconds; nothing else imports it eagerly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import EvaluationReason, Evaluator, EvaluatorContext, EvaluatorOutput

from evaljig_cases._code_cases import CodeCase
from evaljig_cases._eval_case import EvalCase
from evaljig_cases._loading import ensure_unique_ids
from evaljig_cases._metrics import Metric

InputsT = TypeVar("InputsT")
OutputT = TypeVar("OutputT")
MetadataT = TypeVar("MetadataT")


def to_pydantic_evals(
    base: type[CodeCase[InputsT, OutputT, MetadataT]] | Iterable[EvalCase],
    *,
    name: str | None = None,
    evaluators: Sequence[Evaluator[Any, Any, Any]] = (),
) -> Dataset[Any, Any, Any]:
    """Cases as a ``pydantic_evals.Dataset``: every code-defined case under ``base`` (``collect_cases`` order,
    named after ``base`` by default), or data cases (``load_cases(...)``; named ``cases`` by default).

    A data case becomes the same shape as a ``ToolCase``: inputs are the ``EvalCase``, the expected
    output its ``expectations``, the metadata its ``tool_id`` and ``description``.
    """
    if isinstance(base, type):
        return base.to_pydantic_evals(name=name, evaluators=evaluators)
    data_cases = list(base)
    wrong = [type(c).__name__ for c in data_cases if not isinstance(c, EvalCase)]
    if wrong:
        raise TypeError(f"to_pydantic_evals takes a CodeCase class or EvalCase objects, got {', '.join(wrong)}")
    ensure_unique_ids(data_cases)
    return Dataset(
        name=name or "cases",
        cases=[
            Case(
                name=case.id,
                inputs=case,
                expected_output=dict(case.expectations),
                metadata={"tool_id": case.tool_id, "description": case.description},
            )
            for case in data_cases
        ],
        evaluators=evaluators,
    )


@dataclass(repr=False)
class MetricEvaluator(Evaluator[EvalCase, Any, Any]):
    """A ``Metric`` as a pydantic-evals evaluator over ``ToolCase`` datasets (inputs are ``EvalCase``).

    pass/fail become an assertion named after the metric, with its reason; a numeric score is also
    reported as the score ``<metric>_score``; skip produces no result.
    """

    metric: Metric

    def get_default_evaluation_name(self) -> str:
        return self.metric.name

    async def evaluate(self, ctx: EvaluatorContext[EvalCase, Any, Any]) -> EvaluatorOutput:
        result = await self.metric.measure_async(ctx.inputs, ctx.output)
        if result.status == "skip":
            return {}
        verdict = EvaluationReason(value=result.status == "pass", reason=result.reason or None)
        if result.score is None:
            return verdict
        return {self.metric.name: verdict, f"{self.metric.name}_score": float(result.score)}


@contextmanager
def private_event_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """Run ``Dataset.evaluate_sync`` inside this: it closes the loop pydantic-evals would otherwise leave open.

    ``evaluate_sync`` sets a new event loop as the thread's current loop and never closes it; once something
    else replaces that loop, the garbage collector reports it as an unclosed-loop ``ResourceWarning``, which
    an ``error`` warning filter turns into a failure in whatever test happens to be running.
    """
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        asyncio.set_event_loop(None)
        loop.close()
