"""The assistant's tool calls in the shapes clients parse: ``tool_calls`` (function, custom) or ``function_call``.

Arguments come from the one schema-instance generator, seeded by the conversation, the choice
index and the tool (a Responses call: by its prompt), so the same request gets the same calls; a
scripted turn's calls are used as they are. ``unknown-tool`` and ``bad-tool-args`` break chat's
and Responses' calls alike (``broken_calls``).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import orjson

from evaljig_gateway import _content, _regex_sample, _shaping
from evaljig_gateway._behaviours import Behaviour
from evaljig_gateway._errors import GatewayError, invalid
from evaljig_gateway._limits import BudgetExceededError, OutputBudget
from evaljig_gateway._schema_instance import instance_json, seeded_rng
from evaljig_gateway._script import ToolCall

if TYPE_CHECKING:  # _tool_choice imports conversation_seed from here
    from evaljig_gateway._tool_choice import Tool


def conversation_seed(messages: list[dict[str, Any]]) -> str:
    """A digest of the canonical conversation: key order and whitespace in the request do not matter."""
    try:
        return hashlib.sha256(orjson.dumps(messages, option=orjson.OPT_SORT_KEYS)).hexdigest()
    except TypeError:
        raise GatewayError(400, "The messages cannot be read as JSON.", param="messages") from None


def generated_calls(tools: list[Tool], seed: str, index: int, budget: OutputBudget) -> list[ToolCall]:
    """Calls to ``tools`` with generated arguments, spending ``budget`` (the request's)."""
    return [generated_call(tool, f"{seed}\x00{index}\x00{tool.name}", budget) for tool in tools]


def generated_call(tool: Tool, seed: str, budget: OutputBudget) -> ToolCall:
    """A call to ``tool``, spending ``budget``: a function's arguments are an instance of its parameters; a custom
    tool's input is free text, or a string matching a ``regex`` grammar (a ``lark`` grammar gets free text)."""
    if tool.kind == "function":
        schema = tool.parameters or {"type": "object"}
        arguments = instance_json(schema, seed=seed, budget=budget, param=f"{tool.where}.parameters")
        return ToolCall("function", tool.name, arguments)
    if not tool.grammar or tool.grammar[0] != "regex":
        return ToolCall("custom", tool.name, _content.default_answer(seed))
    try:
        sample = _regex_sample.sample(f"^(?:{tool.grammar[1]})$", seeded_rng(seed), budget)
        budget.spend_chars(len(sample))
    except (_regex_sample.RegexError, BudgetExceededError) as exc:
        raise invalid(f"{tool.where}.format.grammar.definition", str(exc)) from None
    return ToolCall("custom", tool.name, sample)


def broken_calls(behaviour: Behaviour, calls: list[ToolCall], offered: list[str]) -> list[ToolCall]:
    """``calls`` as ``unknown-tool`` and ``bad-tool-args`` break them (a custom tool's free text is left alone;
    other behaviours leave every call as it is)."""
    broken = []
    for c in calls:
        payload = _shaping.tool_arguments(behaviour, c.payload) if c.kind == "function" else c.payload
        broken.append(ToolCall(c.kind, _shaping.tool_name(behaviour, c.name, offered), payload))
    return broken


def call_id(digest: str, index: int, position: int) -> str:
    if position == 0:
        return f"call_{digest[24 + index % 8 : 48 + index % 8]}"
    return "call_" + hashlib.sha256(f"{digest}\x00{index}\x00{position}".encode()).hexdigest()[:24]


def call_message(calls: list[ToolCall], digest: str, index: int, *, legacy: bool) -> tuple[dict[str, Any], str]:
    """The assistant message and finish reason for ``calls``."""
    if legacy:
        function_call = {"name": calls[0].name, "arguments": calls[0].payload}
        return {"role": "assistant", "content": None, "function_call": function_call}, "function_call"
    tool_calls = []
    for i, c in enumerate(calls):
        field = "input" if c.kind == "custom" else "arguments"
        tool_calls.append({"id": call_id(digest, index, i), "type": c.kind, c.kind: {"name": c.name, field: c.payload}})
    return {"role": "assistant", "content": None, "tool_calls": tool_calls, "refusal": None}, "tool_calls"


def call_deltas(message: dict[str, Any]) -> list[dict[str, Any]]:
    """Stream deltas for a tool-call message: each call's head (id, name) then its arguments or input."""
    legacy = message.get("function_call")
    if legacy is not None:
        named = {"function_call": {"name": legacy["name"], "arguments": ""}}
        return [named, {"function_call": {"arguments": legacy["arguments"]}}]
    deltas: list[dict[str, Any]] = []
    for i, call in enumerate(message["tool_calls"]):
        kind = call["type"]
        field = "input" if kind == "custom" else "arguments"
        head = {"index": i, **call, kind: {**call[kind], field: ""}}  # the call (id, type, name), its payload empty
        deltas += [{"tool_calls": [head]}, {"tool_calls": [{"index": i, kind: {field: call[kind][field]}}]}]
    return deltas
