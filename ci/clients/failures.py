"""The failure cells (issue 31): one gateway model per behaviour, and one line for what a client made of it.

Each client's test module runs every behaviour of ``matrix.FAILURES`` through its own API,
streamed and not, and pins what it saw: the exception it raised (``raises openai.RateLimitError``)
or what it returned (``returns content '', finish_reason stop``). A client release that starts to
handle a failure differently turns its cell into a FAIL, and the line says what it does now.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from .matrix import FAILURES

#: The gateway model that plays each failure (docs/gateway.md's behaviour table).
MODELS = {
    "reasoning": "reasoning-gpt-stub",
    "think-empty": "think-empty-gpt-stub",
    "length": "length-gpt-stub",
    "cut": "cut-2-gpt-stub",
    "drop": "drop-2-gpt-stub",
    "garble": "garble-2-gpt-stub",
    "context": "context-16-gpt-stub",
    "tpm": "tpm-40-gpt-stub",
    "bad-tool-args": "bad-tool-args-gpt-stub",
    "unknown-tool": "unknown-tool-gpt-stub",
}
#: A prompt well over ``context-16``'s window.
LONG_PROMPT = "Summarise these notes: " + " ".join(f"note {i} moved to room {i + 10}." for i in range(1, 12))
#: ``tpm-40``: each call spends its prompt and answer; the window is never advanced, so a call is refused.
TPM_CALLS = 6
WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
TOOL_FAILURES = ("bad-tool-args", "unknown-tool")


def cells(client: str, expected: Mapping[str, str]) -> list[Any]:
    """``pytest.param(failure, expected)`` per failure, marked with its ``cell(client, failure)``."""
    assert set(expected) == set(FAILURES), sorted(set(FAILURES) ^ set(expected))
    return [pytest.param(f, expected[f], id=f, marks=pytest.mark.cell(client, f)) for f in FAILURES]


#: Failures that break the reply on its way: asked for a longer (unkeyed) answer, so a cut one shows.
TRANSPORT_FAILURES = ("cut", "drop", "garble")


def prompt(failure: str) -> str:
    """The prompt a failure cell sends: the keyed question, or one that shows the failure better."""
    if failure == "context":
        return LONG_PROMPT
    if failure in TOOL_FAILURES:
        return "Use get_weather for Paris."
    if failure in TRANSPORT_FAILURES:
        return "Count from one to five."
    return "What is the capital of France?"


def outcome(call: Callable[[], str]) -> str:
    """``returns <what call() describes>``, or ``raises <package>.<Exception>``."""
    try:
        return f"returns {call()}"
    except Exception as exc:
        return f"raises {exception_name(exc)}"


def exception_name(exc: BaseException) -> str:
    """``openai.APIConnectionError``, ``httpx.RemoteProtocolError``, ``json.JSONDecodeError``: package and class."""
    return f"{type(exc).__module__.split('.')[0]}.{type(exc).__name__}"


def answer_text(content: str | None, finish: str | None, *, reasoning: str | None = None, calls: Any = ()) -> str:
    """One answer as a line: content (cut to 24 characters), finish_reason, and what rode along."""
    text = "null" if content is None else repr(content if len(content) <= 24 else content[:24] + "...")
    parts = [f"content {text}", f"finish_reason {finish}"]
    if reasoning:
        parts.append("reasoning kept")
    parts += [f"tool {name}({arguments})" for name, arguments in calls]
    return ", ".join(parts)


def until_refused(call: Callable[[], Any], calls: int = TPM_CALLS) -> str:
    """The same call up to ``calls`` times: which one was refused, and how."""
    for n in range(1, calls + 1):
        try:
            call()
        except Exception as exc:
            return f"call {n} raises {exception_name(exc)}"
    return f"all {calls} calls answered"
