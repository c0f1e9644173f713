"""Run a tool once on a case and capture what it returned, or what it raised, as JSON-able data."""

from __future__ import annotations

import asyncio
import inspect
import traceback
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from evaljig_cases.models import EvalCase

#: A tool returns a mapping (or a pydantic model), directly or from a coroutine.
ToolOutput = Mapping[str, Any] | BaseModel
Tool = Callable[[EvalCase], ToolOutput | Awaitable[ToolOutput]]


@dataclass(frozen=True)
class ToolRun:
    """The single run of a tool on a case, shared by every metric item of that case."""

    case: EvalCase
    inference: dict[str, Any] | None
    error: str | None = None


def run_tool(tool: Tool, case: EvalCase) -> ToolRun:
    """Call ``tool`` (sync or async) on ``case``; an exception becomes ``ToolRun.error`` instead of propagating."""
    try:
        output = tool(case)
        if inspect.isawaitable(output):
            output = asyncio.run(_await(output))
        return ToolRun(case=case, inference=to_inference(output))
    except Exception as exc:
        return ToolRun(case=case, inference=None, error=describe_exception(exc))


def to_inference(output: object) -> dict[str, Any]:
    """The tool's output as a JSON-able dict, which is what metrics see and reports store."""
    if isinstance(output, BaseModel):
        output = output.model_dump(mode="json")
    if not isinstance(output, Mapping):
        raise TypeError(f"a tool must return a mapping or a pydantic model, got {type(output).__name__}")
    jsonable = to_jsonable_python(dict(output))
    assert isinstance(jsonable, dict)
    return jsonable


def describe_exception(exc: BaseException) -> str:
    """``ValueError: message`` — the exception line a report shows."""
    return "".join(traceback.format_exception_only(exc)).strip()


async def _await(awaitable: Awaitable[ToolOutput]) -> ToolOutput:
    return await awaitable
