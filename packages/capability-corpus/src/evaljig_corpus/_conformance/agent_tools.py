"""Tools past the first turn, and tool arguments for nested (``$defs``/``$ref``) schemas.

Agent loops (pydantic-ai's output tool, instructor's retries) send a conversation that already
holds a tool call and its result, and rely on ``tool_choice``: ``required`` and a named function
must still get a call, ``auto`` after a result that answers the question gets the answer as text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaljig_corpus._checks import Checker
from evaljig_corpus._conformance.shared import check_choices, check_head, request_body
from evaljig_corpus._conformance.tools import check_tool_calls
from evaljig_corpus._transport import DEFAULT_TIMEOUT, Target, client_for, post_json

PATH = "/chat/completions"


def assert_multiturn_tools_conformance(
    target: Target,
    *,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """Three turns after a tool result: ``required`` calls a tool, a named function is called, ``auto`` answers text.

    ``messages`` should end with a ``tool`` message; the named turn names the last tool offered.
    Returns the ``auto`` turn's body.
    """
    check = Checker("multiturn_tools")
    names = [
        t["function"]["name"] for t in tools or [] if isinstance(t, Mapping) and isinstance(t.get("function"), Mapping)
    ]
    named = {"type": "function", "function": {"name": names[-1]}} if names else None
    with client_for(target, timeout) as client:
        for choice, label in (("required", "tool_choice=required"), (named, "tool_choice=named")):
            body = request_body(model=model, messages=messages, tools=tools, tool_choice=choice)
            data = post_json(check, client, PATH, body)
            check_head(check, data, "chat.completion", f"response[{label}]")
            first = check_choices(check, data, 1)[0]
            check.equal(first.get("finish_reason"), "tool_calls", f"[{label}] choices[0].finish_reason")
            message = check.obj(first.get("message"), f"[{label}] choices[0].message")
            forced = names[-1] if choice is named else None
            check_tool_calls(check, message, tools, forced, f"[{label}] choices[0].message")
        data = post_json(
            check, client, PATH, request_body(model=model, messages=messages, tools=tools, tool_choice="auto")
        )
    check_head(check, data, "chat.completion", "response[tool_choice=auto]")
    last = check_choices(check, data, 1)[0]
    check.equal(last.get("finish_reason"), "stop", "[tool_choice=auto] choices[0].finish_reason")
    message = check.obj(last.get("message"), "[tool_choice=auto] choices[0].message")
    check.string(message.get("content"), "[tool_choice=auto] choices[0].message.content", non_empty=True)
    check.usage(data.get("usage"))
    return data


def assert_nested_tools_conformance(
    target: Target,
    *,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: str | Mapping[str, Any] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """A tool whose parameters nest models through ``$defs``/``$ref``: the arguments must be an instance."""
    check = Checker("nested_tools")
    body = request_body(model=model, messages=messages, tools=tools, tool_choice=tool_choice)
    with client_for(target, timeout) as client:
        data = post_json(check, client, PATH, body)
    check_head(check, data, "chat.completion")
    choice = check_choices(check, data, 1)[0]
    check.equal(choice.get("finish_reason"), "tool_calls", "choices[0].finish_reason")
    message = check.obj(choice.get("message"), "choices[0].message")
    forced = tool_choice["function"].get("name") if isinstance(tool_choice, Mapping) else None
    check_tool_calls(check, message, tools, forced if isinstance(forced, str) else None, "choices[0].message")
    check.usage(data.get("usage"))
    return data
