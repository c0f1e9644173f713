"""The pydantic-evals bridge: code-defined cases as a ``pydantic_evals.Dataset``, metrics as evaluators.

Kept in its own module because importing pydantic_evals costs seconds; nothing else imports it eagerly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import EvaluationReason, Evaluator, EvaluatorContext, EvaluatorOutput

from evaljig_cases.code_cases import CodeCase, collect_cases
from evaljig_cases.metrics import Metric
from evaljig_cases.models import EvalCase

InputsT = TypeVar("InputsT")
OutputT = TypeVar("OutputT")
MetadataT = TypeVar("MetadataT")


def to_pydantic_evals(
    base: type[CodeCase[InputsT, OutputT, MetadataT]],
    *,
    name: str | None = None,
    evaluators: Sequence[Evaluator[InputsT, OutputT, MetadataT]] = (),
) -> Dataset[InputsT, OutputT, MetadataT]:
    """Every case under ``base`` (``collect_cases`` order) as a Dataset named after ``base`` by default."""
    cases = [
        Case(
            name=case.name,
            inputs=case.inputs,
            expected_output=case.expected_output,
            metadata=case.metadata,
            evaluators=list(case.evaluators),
        )
        for case in collect_cases(base)
    ]
    return Dataset(name=name or base.__name__, cases=cases, evaluators=evaluators)


@dataclass(repr=False)
class MetricEvaluator(Evaluator[EvalCase, Any, Any]):
    """A ``Metric`` as a pydantic-evals evaluator over ``ToolCase`` datasets (inputs are ``EvalCase``).

    pass/fail become an assertion with the metric's reason; skip produces no result.
    """

    metric: Metric

    def get_default_evaluation_name(self) -> str:
        return self.metric.name

    async def evaluate(self, ctx: EvaluatorContext[EvalCase, Any, Any]) -> EvaluatorOutput:
        result = await self.metric.measure_async(ctx.inputs, ctx.output)
        if result.status == "skip":
            return {}
        return EvaluationReason(value=result.status == "pass", reason=result.reason or None)


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
