"""Function calling: the answer is a tool call to an offered function with JSON arguments fitting its schema."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaljig_common import StrictJSONError, loads_strict
from evaljig_corpus._checks import Checker
from evaljig_corpus._conformance.shared import check_choices, check_head, request_body
from evaljig_corpus._transport import DEFAULT_TIMEOUT, Target, client_for, post_json

_EXCERPT = 300


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
    return _tool_answer(Checker("tools"), target, model, messages, tools, tool_choice, timeout)


def assert_broken_tools_conformance(
    target: Target,
    *,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: str | Mapping[str, Any] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """The ``tools`` check under its own capability, for targets that play broken tool calls.

    A call whose arguments are not JSON, or that names a tool the request did not offer, reaches
    an agent loop as an ordinary call; a target playing one (``bad-tool-args``, ``unknown-tool``)
    must fail this check on ``function.arguments`` or ``function.name``.
    """
    return _tool_answer(Checker("broken_tools"), target, model, messages, tools, tool_choice, timeout)


def _tool_answer(
    check: Checker,
    target: Target,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None,
    tools: Sequence[Mapping[str, Any]] | None,
    tool_choice: str | Mapping[str, Any] | None,
    timeout: float,
) -> dict[str, Any]:
    body = request_body(model=model, messages=messages, tools=tools, tool_choice=tool_choice)
    with client_for(target, timeout) as client:
        data = post_json(check, client, "/chat/completions", body)
    check_head(check, data, "chat.completion")
    choice = check_choices(check, data, 1)[0]
    check.one_of(choice.get("finish_reason"), ("tool_calls", "stop"), "choices[0].finish_reason")
    message = check.obj(choice.get("message"), "choices[0].message")
    check.equal(message.get("role"), "assistant", "choices[0].message.role")
    check_tool_calls(check, message, tools, _forced_name(tool_choice), "choices[0].message")
    check.usage(data.get("usage"))
    return data


def check_tool_calls(
    check: Checker,
    message: Mapping[str, Any],
    tools: Sequence[Mapping[str, Any]] | None,
    forced: str | None,
    field: str,
) -> None:
    """``message.tool_calls``: each calls an offered function (``forced`` if given) with arguments fitting it."""
    offered = _offered(tools)
    calls = check.arr(message.get("tool_calls"), f"{field}.tool_calls", non_empty=True)
    for j, raw in enumerate(calls):
        where = f"{field}.tool_calls[{j}]"
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


def _parse_arguments(check: Checker, text: str, where: str) -> Any:
    """Strict JSON (evaljig-common's one reader): Python's parser also takes NaN, Infinity and repeated keys."""
    try:
        return loads_strict(text)
    except StrictJSONError as exc:
        reason = f"{exc.reason}{exc.where}"
        check.fail(where, f"must be a JSON object, got unparsable text ({reason}): {text[:_EXCERPT]!r}")


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
    """Every way ``value`` breaks ``schema`` (full JSON Schema: ``$ref``/``$defs``, combinators, bounds, formats).

    ``jsonschema`` judges, with the draft the schema declares (2020-12 when it declares none), so a
    nested pydantic model's arguments are checked as strictly as the client will parse them.
    """
    # imported on first use: jsonschema costs ~100 ms, and importing the corpus should stay light
    import jsonschema  # type: ignore[import-untyped,unused-ignore]
    import referencing.exceptions

    try:
        validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        validator = validator_class(schema, format_checker=jsonschema.FormatChecker())
        errors = sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    except (jsonschema.exceptions.SchemaError, referencing.exceptions.Unresolvable) as exc:
        return [f"the offered schema cannot be used to check {where}: {str(exc).splitlines()[0]}"]
    except RecursionError:
        return [f"the offered schema nests too deeply to check {where}"]
    return [f"{where}{''.join(_step(p) for p in e.absolute_path)}: {e.message}" for e in errors]


def _step(part: str | int) -> str:
    return f"[{part}]" if isinstance(part, int) else f".{part}"
