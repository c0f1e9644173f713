"""Run a tool once on a case and capture what it returned, or what it raised, as JSON-able data."""

from __future__ import annotations

import asyncio
import inspect
import traceback
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from evaljig_cases._eval_case import EvalCase

#: A tool returns a mapping (or a pydantic model), directly or from a coroutine.
ToolOutput = Mapping[str, Any] | BaseModel
Tool = Callable[[EvalCase], ToolOutput | Awaitable[ToolOutput]]


@dataclass(frozen=True)
class ToolRun:
    """The single run of a tool on a case, shared by every metric of that case."""

    case: EvalCase
    inference: dict[str, Any] | None
    error: str | None = None
    traceback: str | None = None
    """The user frames of the tool's exception (see :func:`user_traceback`)."""


def run_tool(tool: Tool, case: EvalCase) -> ToolRun:
    """Call ``tool`` (sync or async) on ``case``; an exception becomes ``ToolRun.error`` instead of propagating."""
    try:
        output = tool(case)
        if inspect.isawaitable(output):
            output = asyncio.run(_await(output))
        return ToolRun(case=case, inference=to_inference(output))
    except Exception as exc:
        return ToolRun(case=case, inference=None, error=describe_exception(exc), traceback=user_traceback(exc))


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


#: Frames from these folders are machinery (this package, asyncio), not the user's tool or metric.
_MACHINERY = (str(Path(__file__).resolve().parent), str(Path(asyncio.__file__).resolve().parent))
_MAX_FRAMES = 30
_MAX_CHARS = 8000


def user_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` without evaljig's and asyncio's frames: file, line and code only (no locals).

    Paths below the working directory are shown relative to it.

    Bounded: the last 30 frames, the last 8,000 characters.
    """
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__) if not str(Path(f.filename).resolve()).startswith(_MACHINERY)
    ]
    lines = [  # no caret lines: they differ between Python versions
        f'  File "{_relative(f.filename)}", line {f.lineno}, in {f.name}\n'
        + (f"    {f.line.strip()}\n" if f.line else "")
        for f in frames[-_MAX_FRAMES:]
    ]
    text = "Traceback (most recent call last):\n" + "".join(lines)
    text += describe_exception(exc)
    return text if len(text) <= _MAX_CHARS else "…" + text[-(_MAX_CHARS - 1) :]


def _relative(filename: str) -> str:
    """A path below the working directory as a relative one: reports stay the same on every machine."""
    try:
        return Path(filename).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return filename


async def _await(awaitable: Awaitable[ToolOutput]) -> ToolOutput:
    return await awaitable
