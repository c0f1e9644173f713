"""Function calling: the answer is a tool call to an offered function with JSON arguments fitting its schema."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from evaljig_corpus._checks import Checker
from evaljig_corpus._conformance.shared import check_choices, check_head, request_body
from evaljig_corpus._transport import DEFAULT_TIMEOUT, Target, client_for, post_json

_EXCERPT = 300
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def assert_tools_conformance(
    target: Target,
    *,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: str | Mapping[str, Any] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """POST a chat completion offering ``tools``; the first choice must call one with valid JSON arguments."""
    check = Checker("tools")
    body = request_body(model=model, messages=messages, tools=tools, tool_choice=tool_choice)
    with client_for(target, timeout) as client:
        data = post_json(check, client, "/chat/completions", body)
    check_head(check, data, "chat.completion")
    choice = check_choices(check, data, 1)[0]
    check.one_of(choice.get("finish_reason"), ("tool_calls", "stop"), "choices[0].finish_reason")
    message = check.obj(choice.get("message"), "choices[0].message")
    check.equal(message.get("role"), "assistant", "choices[0].message.role")
    offered = _offered(tools)
    forced = _forced_name(tool_choice)
    calls = check.arr(message.get("tool_calls"), "choices[0].message.tool_calls", non_empty=True)
    for j, raw in enumerate(calls):
        where = f"choices[0].message.tool_calls[{j}]"
        call = check.obj(raw, where)
        check.string(call.get("id"), f"{where}.id", non_empty=True)
        check.equal(call.get("type"), "function", f"{where}.type")
        function = check.obj(call.get("function"), f"{where}.function")
        name = check.string(function.get("name"), f"{where}.function.name", non_empty=True)
        check.one_of(name, sorted(offered), f"{where}.function.name")
        if forced is not None:
            check.equal(name, forced, f"{where}.function.name")
        at = f"{where}.function.arguments"
        arguments = check.obj(_parse_arguments(check, check.string(function.get("arguments"), at), at), at)
        for problem in schema_problems(arguments, offered[name], "arguments"):
            check.fail(at, problem)
    check.usage(data.get("usage"))
    return data


def _parse_arguments(check: Checker, text: str, where: str) -> Any:
    """Strict JSON: Python's parser also takes NaN and Infinity, which no other JSON parser does."""
    try:
        return json.loads(text, parse_constant=_not_json)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than Python's parser goes
        check.fail(where, f"must be a JSON object, got unparsable text ({exc}): {text[:_EXCERPT]!r}")


def _not_json(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


def _offered(tools: Sequence[Mapping[str, Any]] | None) -> dict[str, Mapping[str, Any]]:
    """Function name -> parameters schema, for the tools the request offered."""
    offered: dict[str, Mapping[str, Any]] = {}
    for tool in tools or []:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            params = function.get("parameters")
            offered[function["name"]] = params if isinstance(params, Mapping) else {"type": "object"}
    return offered


def _forced_name(tool_choice: str | Mapping[str, Any] | None) -> str | None:
    if isinstance(tool_choice, Mapping) and isinstance(tool_choice.get("function"), Mapping):
        name = tool_choice["function"].get("name")
        return name if isinstance(name, str) else None
    return None


def schema_problems(value: Any, schema: Mapping[str, Any], where: str) -> list[str]:
    """The subset of JSON Schema tool definitions use: type, enum, const, required, properties, items."""
    kinds = schema.get("type")
    if isinstance(kinds, str):
        kinds = [kinds]
    if isinstance(kinds, list) and kinds:
        allowed = tuple(t for k in kinds for t in _JSON_TYPES.get(k, ()))
        is_bool_for_number = isinstance(value, bool) and "boolean" not in kinds
        if not isinstance(value, allowed) or is_bool_for_number:
            return [f"{where} must be of type {'/'.join(kinds)}, got {json.dumps(value)}"]
    if isinstance(schema.get("enum"), list) and value not in schema["enum"]:
        return [f"{where} must be one of {json.dumps(schema['enum'])}, got {json.dumps(value)}"]
    if "const" in schema and value != schema["const"]:
        return [f"{where} must be {json.dumps(schema['const'])}, got {json.dumps(value)}"]
    problems: list[str] = []
    if isinstance(value, dict):
        problems += [f"{where}.{key} is required" for key in schema.get("required", []) if key not in value]
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            for key, sub in properties.items():
                if key in value and isinstance(sub, Mapping):
                    problems += schema_problems(value[key], sub, f"{where}.{key}")
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            problems += schema_problems(item, schema["items"], f"{where}[{i}]")
    return problems
