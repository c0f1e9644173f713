"""The Responses API: function calls as ``function_call`` output items, and its streamed event sequence."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaljig_corpus._checks import Checker
from evaljig_corpus._conformance.shared import request_body
from evaljig_corpus._conformance.tools import _parse_arguments, schema_problems
from evaljig_corpus._transport import DEFAULT_TIMEOUT, Target, client_for, parse_event, post_json, post_sse

Input = str | Sequence[Mapping[str, Any]]
_FIRST = ("response.created", "response.in_progress")
_LAST = ("response.completed", "response.incomplete")


def _offered(tools: Sequence[Mapping[str, Any]] | None) -> dict[str, Mapping[str, Any]]:
    """Function name -> parameters schema, for the flat Responses tool shape."""
    offered: dict[str, Mapping[str, Any]] = {}
    for tool in tools or []:
        if isinstance(tool, Mapping) and tool.get("type") == "function" and isinstance(tool.get("name"), str):
            params = tool.get("parameters")
            offered[tool["name"]] = params if isinstance(params, Mapping) else {"type": "object"}
    return offered


def _check_response(check: Checker, data: dict[str, Any], field: str) -> list[dict[str, Any]]:
    """A response object's head, status and usage; its output items are returned."""
    check.string(data.get("id"), f"{field}.id", non_empty=True)
    check.equal(data.get("object"), "response", f"{field}.object")
    check.one_of(data.get("status"), ("completed", "incomplete"), f"{field}.status")
    usage = check.obj(data.get("usage"), f"{field}.usage")
    counts = {
        k: check.integer(usage.get(k), f"{field}.usage.{k}", minimum=0)
        for k in ("input_tokens", "output_tokens", "total_tokens")
    }
    if counts["total_tokens"] != counts["input_tokens"] + counts["output_tokens"]:
        check.fail(f"{field}.usage.total_tokens", "must equal input_tokens + output_tokens")
    return [
        check.obj(item, f"{field}.output[{i}]")
        for i, item in enumerate(check.arr(data.get("output"), f"{field}.output", non_empty=True))
    ]


def _check_call(check: Checker, item: dict[str, Any], where: str, offered: dict[str, Mapping[str, Any]]) -> None:
    check.string(item.get("call_id"), f"{where}.call_id", non_empty=True)
    name = check.string(item.get("name"), f"{where}.name", non_empty=True)
    check.one_of(name, sorted(offered), f"{where}.name")
    at = f"{where}.arguments"
    arguments = check.obj(_parse_arguments(check, check.string(item.get("arguments"), at), at), at)
    for problem in schema_problems(arguments, offered[name], "arguments"):
        check.fail(at, problem)


def assert_responses_tools_conformance(
    target: Target,
    *,
    model: str,
    input: Input | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: str | Mapping[str, Any] | None = None,
    instructions: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """POST a response offering function ``tools``: the output must call one, with JSON arguments fitting it."""
    check = Checker("responses_tools")
    body = request_body(model=model, input=input, tools=tools, tool_choice=tool_choice, instructions=instructions)
    with client_for(target, timeout) as client:
        data = post_json(check, client, "/responses", body)
    offered = _offered(tools)
    calls = [
        (i, item)
        for i, item in enumerate(_check_response(check, data, "response"))
        if item.get("type") == "function_call"
    ]
    if not calls:
        check.fail("response.output", "must hold a function_call item when a tool is required")
    for i, item in calls:
        _check_call(check, item, f"response.output[{i}]", offered)
    return data


def assert_responses_stream_conformance(
    target: Target,
    *,
    model: str,
    input: Input | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    instructions: str | None = None,
    max_output_tokens: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> list[dict[str, Any]]:
    """POST a response with ``stream: true``: check the event sequence and that the deltas rebuild the output."""
    check = Checker("responses_stream")
    body = request_body(
        model=model,
        input=input,
        tools=tools,
        instructions=instructions,
        max_output_tokens=max_output_tokens,
        stream=True,
    )
    with client_for(target, timeout) as client:
        raw = post_sse(check, client, "/responses", body)
    events = [parse_event(check, data, f"events[{k}]") for k, data in enumerate(raw) if data != "[DONE]"]
    if len(events) < 3:
        check.fail("stream", f"must carry at least response.created, an output and its end; got {len(events)} events")
    kinds = [check.string(e.get("type"), f"events[{k}].type", non_empty=True) for k, e in enumerate(events)]
    numbers = [e.get("sequence_number") for e in events]
    if any(isinstance(n, bool) or not isinstance(n, int) for n in numbers) or numbers != sorted(set(numbers)):  # type: ignore[type-var]
        check.fail("events[].sequence_number", f"must be increasing integers, got {numbers[:10]}")
    check.equal(kinds[0], _FIRST[0], "events[0].type")
    check.one_of(kinds[-1], _LAST, f"events[{len(kinds) - 1}].type")
    final = check.obj(events[-1].get("response"), f"events[{len(kinds) - 1}].response")
    output = _check_response(check, final, f"events[{len(kinds) - 1}].response")
    texts: dict[int, str] = {}
    arguments: dict[int, str] = {}
    added: list[int] = []
    done: dict[int, dict[str, Any]] = {}
    for k, (kind, event) in enumerate(zip(kinds, events, strict=True)):
        where = f"events[{k}]"
        if kind in (
            "response.output_text.delta",
            "response.function_call_arguments.delta",
            "response.output_item.added",
            "response.output_item.done",
        ):
            index = check.integer(event.get("output_index"), f"{where}.output_index", minimum=0)
            if kind == "response.output_item.added":
                added.append(index)
            elif kind == "response.output_item.done":
                if index not in added:
                    check.fail(f"{where}.output_index", f"output item {index} is done before it was added")
                done[index] = check.obj(event.get("item"), f"{where}.item")
            elif kind == "response.output_text.delta":
                texts[index] = texts.get(index, "") + check.string(event.get("delta"), f"{where}.delta")
            else:
                arguments[index] = arguments.get(index, "") + check.string(event.get("delta"), f"{where}.delta")
    if sorted(done) != list(range(len(output))) or sorted(added) != list(range(len(output))):
        check.fail(
            "stream",
            f"each output item must be added and done once: {len(output)} items, added {added}, done {sorted(done)}",
        )
    for index, item in enumerate(output):
        if done[index] != item:
            check.fail(f"response.output[{index}]", "must equal the item of its response.output_item.done event")
        if item.get("type") == "message":
            content = "".join(str(p.get("text", "")) for p in item.get("content", []) if isinstance(p, dict))
            if texts.get(index, "") != content:
                check.fail(
                    f"response.output[{index}].content",
                    f"must be the joined output_text deltas {texts.get(index, '')[:80]!r}, got {content[:80]!r}",
                )
        elif item.get("type") == "function_call":
            if arguments.get(index, "") != item.get("arguments"):
                check.fail(f"response.output[{index}].arguments", "must be the joined function_call_arguments deltas")
            _check_call(check, item, f"response.output[{index}]", _offered(tools))
    return events
