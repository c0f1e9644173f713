"""Structured output: ``response_format`` ``json_object`` and ``json_schema`` answered with JSON that fits.

Clients parse the answer (openai ``parse()``, litellm ``response_format=Model``, instructor,
pydantic-ai, langchain ``with_structured_output``), so plain text breaks them. ``json_schema``
gets an instance of the schema from ``_schema_instance`` (strict or not), ``json_object`` an
object; an answer key's text that is JSON is answered as it is, so a test can pin the value.
A ``json_object`` request whose system message holds a JSON Schema (pydantic-ai's
``PromptedOutput``, instructor's ``Mode.JSON`` write it there) gets an instance of that schema,
as a model that reads its prompt would answer.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from evaljig_gateway._errors import invalid, missing
from evaljig_gateway._limits import OutputBudget
from evaljig_gateway._schema_instance import SchemaInstanceError, instance_for, instance_json
from evaljig_gateway._tool_choice import name_of

_PARAM = "response_format"
#: Roles whose text may hold a prompted schema, and the bounds of the search: messages longer than
#: this are not searched, and at most this many line-starting ``{`` are tried as JSON, so a hostile
#: prompt costs a bounded amount of parsing.
_SCHEMA_ROLES = ("system", "developer")
_MAX_SCHEMA_TEXT = 64 * 1024
_MAX_SCHEMA_TRIES = 16
#: A JSON object holding one of these at its top is taken for a schema.
_SCHEMA_KEYS = ("properties", "$defs", "definitions", "$ref", "anyOf", "oneOf", "allOf")


@dataclass(frozen=True, slots=True)
class JsonFormat:
    """A request for JSON: any object (``schema`` None) or an instance of ``schema``."""

    schema: Mapping[str, Any] | bool | None = None
    #: ``json_object`` only: a schema found in the prompt (:func:`prompted_schema`), answered like ``schema``.
    prompted: Mapping[str, Any] | None = None


def response_format_of(body: dict[str, Any]) -> JsonFormat | None:
    """The requested JSON format, or None for text; 400 naming the field when it is malformed."""
    fmt = body.get(_PARAM)
    if fmt is None:
        return None
    if not isinstance(fmt, dict):
        raise invalid(_PARAM, "must be an object with a 'type'")
    kind = fmt.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return JsonFormat()
    if kind != "json_schema":
        raise invalid(f"{_PARAM}.type", "must be 'text', 'json_object' or 'json_schema'")
    spec = fmt.get("json_schema")
    if spec is None:
        raise missing(f"{_PARAM}.json_schema")
    name_of(spec, f"{_PARAM}.json_schema")  # an object with a non-empty 'name'
    strict = spec.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise invalid(f"{_PARAM}.json_schema.strict", "must be a boolean")
    schema = spec.get("schema", {"type": "object"})
    if not isinstance(schema, (dict, bool)):
        raise invalid(f"{_PARAM}.json_schema.schema", "must be a JSON Schema object")
    return JsonFormat(schema)


def prompted_schema(messages: Iterable[Mapping[str, Any]], text_of: Any) -> Mapping[str, Any] | None:
    """The last JSON Schema written into a system or developer message, or None.

    A candidate is a line whose first non-blank character is ``{`` and which parses from there as
    a JSON object (``raw_decode``, so text may follow) with a schema keyword at its top
    (``properties``, ``$defs``, ``$ref``, ``anyOf``...). ``text_of`` turns a message's ``content``
    into text (the caller's ``message_text``).
    """
    found: Mapping[str, Any] | None = None
    tries = 0
    decoder = json.JSONDecoder()
    for message in messages:
        if message.get("role") not in _SCHEMA_ROLES:
            continue
        text = text_of(message.get("content"))
        if len(text) > _MAX_SCHEMA_TEXT:
            continue
        offset = skip_to = 0
        for line in text.splitlines(keepends=True):
            start, offset = offset, offset + len(line)
            stripped = line.lstrip()
            if not stripped.startswith("{") or start < skip_to or tries >= _MAX_SCHEMA_TRIES:
                continue
            tries += 1
            try:
                value, end = decoder.raw_decode(text, start + len(line) - len(stripped))
            except (ValueError, RecursionError):
                continue
            if isinstance(value, dict) and any(key in value for key in _SCHEMA_KEYS):
                found, skip_to = value, end
    return found


def json_content(fmt: JsonFormat, known: str | None, text: str, seed: str, *, budget: OutputBudget) -> str:
    """The JSON text to answer: the keyed JSON if any, else an instance (or ``{"answer": text}``).

    ``budget`` is the request's (shared by its choices).
    """
    with contextlib.suppress(orjson.JSONDecodeError):  # no key, or an empty answer: not JSON
        if isinstance(orjson.loads(known or ""), dict) or fmt.schema is not None:
            return str(known)  # keyed JSON: any value under a schema, an object otherwise
    if fmt.schema is not None:
        return instance_json(fmt.schema, seed=seed, budget=budget, param=f"{_PARAM}.json_schema.schema")
    if fmt.prompted is not None:
        # a schema in the prompt is a wish, not the request's contract: when it has no instance, any object will do
        with contextlib.suppress(SchemaInstanceError, TypeError):
            return orjson.dumps(instance_for(fmt.prompted, seed=seed, budget=budget)).decode()
    return orjson.dumps({"answer": known if known is not None else text}).decode()
