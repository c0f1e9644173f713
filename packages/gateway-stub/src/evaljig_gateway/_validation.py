"""Request checks that answer 400 naming the field, as OpenAI does, instead of crashing."""

from __future__ import annotations

from typing import Any

import orjson

from evaljig_gateway._errors import GatewayError, invalid, missing

_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
#: Deepest ``properties``/``items`` nesting a tool schema may have; answering follows it, and orjson
#: refuses to write JSON nested past 255 levels.
MAX_SCHEMA_DEPTH = 32


def parse_json(raw: bytes) -> Any:
    """The body as JSON, or a 400 ``invalid_json`` naming orjson's complaint.

    orjson's nesting limit (1024) bounds the depth, and the body's size is bounded before it is read
    (``Limits.max_body_bytes``), so a parse is a few milliseconds at most.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise GatewayError(400, f"The request body is not valid JSON: {exc}", code="invalid_json") from None


def required(body: dict[str, Any], name: str) -> Any:
    """``body[name]``, or a 400 naming it when it is absent or null."""
    value = body.get(name)
    if value is None:
        raise missing(name)
    return value


def body_and_model(raw: bytes) -> tuple[dict[str, Any], str]:
    """A model request's body, which must be a JSON object, and its model name, which must be a non-empty string."""
    body = parse_json(raw)
    if not isinstance(body, dict):
        raise GatewayError(400, "The request body must be a JSON object.", code="invalid_json")
    model = required(body, "model")
    if not isinstance(model, str) or not model.strip():
        raise invalid("model", "must be a non-empty string")
    return body, model


def optional(body: dict[str, Any], name: str, rule: Rule) -> Any:
    """``body[name]`` (None when absent or null), or a 400 naming it when it breaks ``rule``."""
    value = body.get(name)
    if value is not None:
        check_fields({name: value}, {name: rule})
    return value


#: A field's rule: its kind (``number``, ``integer`` or ``boolean``) and, for the first two, its range.
Rule = tuple[str, int, int]
BOOLEAN: Rule = ("boolean", 0, 0)
#: The sampling parameters chat, completions and Responses take.
SAMPLING: dict[str, Rule] = {
    "temperature": ("number", 0, 2),
    "top_p": ("number", 0, 1),
    "presence_penalty": ("number", -2, 2),
    "frequency_penalty": ("number", -2, 2),
}
#: What chat and legacy completions both check: the sampling parameters, ``n`` and ``stream``.
CHOICES: dict[str, Rule] = {**SAMPLING, "n": ("integer", 1, 128), "stream": BOOLEAN}


def check_fields(body: dict[str, Any], rules: dict[str, Rule]) -> None:
    """400 naming the first field of ``body`` (in the body's order) whose value breaks its rule in ``rules``;
    null is no value. One pass over what the body holds: a request pays for the fields it sends."""
    for name, value in body.items():
        rule = rules.get(name)
        if rule is None or value is None:
            continue
        kind, low, high = rule
        if kind == "boolean":
            if not isinstance(value, bool):
                raise invalid(name, "must be a boolean")
            continue
        types = int if kind == "integer" else (int, float)
        if isinstance(value, bool) or not isinstance(value, types) or not low <= value <= high:
            raise invalid(name, f"must be {'an integer' if kind == 'integer' else 'a number'} between {low} and {high}")


def stop_list(body: dict[str, Any]) -> list[str]:
    stop = body.get("stop")
    if stop is None:
        return []
    if isinstance(stop, str):
        return [stop]
    if isinstance(stop, list) and len(stop) <= 4 and all(isinstance(s, str) for s in stop):
        return list(stop)
    raise invalid("stop", "must be a string or a list of at most 4 strings")


def messages_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = required(body, "messages")
    if not isinstance(messages, list) or not messages:
        raise invalid("messages", "must be a non-empty array of message objects")
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise invalid(f"messages[{i}]", "must be an object")
        role = message.get("role")
        if not isinstance(role, str) or role not in _ROLES:  # a list or object is unhashable: test the type first
            raise invalid(f"messages[{i}].role", f"must be one of {', '.join(sorted(_ROLES))}")
        content = message.get("content")
        if content is None:
            if role != "assistant":
                raise missing(f"messages[{i}].content")
        elif not isinstance(content, str):  # plain text, the common case, makes no parameter name
            check_content(content, f"messages[{i}].content")
    return messages


def check_content(content: Any, where: str) -> None:
    """A message's content: a string, or a list of part objects whose ``type`` and ``text`` (when present) are
    strings (chat's messages, the Responses API's input items)."""
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise invalid(where, "must be a string or an array of content parts")
    for j, part in enumerate(content):
        if not isinstance(part, dict):
            raise invalid(f"{where}[{j}]", "must be a content part object")
        for name in ("type", "text"):
            if name in part and not isinstance(part[name], str):
                raise invalid(f"{where}[{j}].{name}", "must be a string")


def check_schema(schema: dict[str, Any], where: str, depth: int = 1) -> None:
    """The parts of a tool's parameters schema an answer is built from: object-valued ``properties``/``items``,
    nested at most ``MAX_SCHEMA_DEPTH`` deep (``depth``: this schema's level, 1 at the top)."""
    if depth > MAX_SCHEMA_DEPTH:
        raise invalid(where, f"nests deeper than {MAX_SCHEMA_DEPTH} levels of 'properties'/'items'")
    props = schema.get("properties")
    if props is not None:
        if not isinstance(props, dict):
            raise invalid(f"{where}.properties", "must be an object mapping property names to schemas")
        for name, sub in props.items():
            if isinstance(sub, dict):
                check_schema(sub, f"{where}.properties.{name}", depth + 1)
    items = schema.get("items")
    if items is not None:
        if not isinstance(items, dict):
            raise invalid(f"{where}.items", "must be a JSON Schema object")
        check_schema(items, f"{where}.items", depth + 1)
