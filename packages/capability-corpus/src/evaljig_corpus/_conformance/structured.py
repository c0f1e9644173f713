"""Structured output: ``response_format`` ``json_object`` answers a JSON object, ``json_schema`` an instance.

Clients parse the content into the caller's model (openai ``parse()``, litellm, instructor,
pydantic-ai), so a server that ignores ``response_format`` breaks them even when its answer is
well-shaped text. The instance is judged by ``jsonschema`` (``$ref``/``$defs``, bounds, formats).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaljig_common import StrictJSONError, loads_strict
from evaljig_corpus._checks import Checker
from evaljig_corpus._conformance.shared import check_choices, check_head, request_body
from evaljig_corpus._conformance.tools import schema_problems
from evaljig_corpus._transport import DEFAULT_TIMEOUT, Target, client_for, post_json

PATH = "/chat/completions"
_EXCERPT = 300


def assert_json_object_conformance(
    target: Target,
    *,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None = None,
    response_format: Mapping[str, Any] | str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """POST a chat completion in JSON mode; the content must be a JSON object."""
    check = Checker("json_object")
    data = _post(check, target, model, messages, response_format, timeout)
    _content_json(check, data, dict)
    return data


def assert_structured_conformance(
    target: Target,
    *,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None = None,
    response_format: Mapping[str, Any] | str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """POST a chat completion with a ``json_schema`` format; the content must be an instance of the schema."""
    check = Checker("structured")
    data = _post(check, target, model, messages, response_format, timeout)
    value = _content_json(check, data, object)
    spec = response_format.get("json_schema") if isinstance(response_format, Mapping) else None
    schema = spec.get("schema") if isinstance(spec, Mapping) else None
    if isinstance(schema, Mapping):
        for problem in schema_problems(value, schema, "content"):
            check.fail("choices[0].message.content", problem)
    return data


def _post(
    check: Checker,
    target: Target,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None,
    response_format: Mapping[str, Any] | str | None,
    timeout: float,
) -> dict[str, Any]:
    body = request_body(model=model, messages=messages, response_format=response_format)
    with client_for(target, timeout) as client:
        data = post_json(check, client, PATH, body)
    check_head(check, data, "chat.completion")
    check.usage(data.get("usage"))
    return data


def _content_json(check: Checker, data: dict[str, Any], kind: type) -> Any:
    choice = check_choices(check, data, 1)[0]
    check.equal(choice.get("finish_reason"), "stop", "choices[0].finish_reason")
    message = check.obj(choice.get("message"), "choices[0].message")
    check.equal(message.get("role"), "assistant", "choices[0].message.role")
    text = check.string(message.get("content"), "choices[0].message.content", non_empty=True)
    try:
        value = loads_strict(text)  # the one strict reader: NaN, duplicate keys and deep nesting refused
    except StrictJSONError as exc:
        reason = f"{exc.reason}{exc.where}"
        check.fail("choices[0].message.content", f"must be JSON, got unparsable text ({reason}): {text[:_EXCERPT]!r}")
    if not isinstance(value, kind):
        check.fail("choices[0].message.content", f"must be a JSON object, got {text[:_EXCERPT]!r}")
    return value
