"""Scripted assistant turns: an answer-key entry that says what the assistant does, turn by turn.

A team testing an agent wants the model's side of the conversation fixed: call this tool with these
arguments, then answer this text. An answer-key value that is an object is such a script:

* one turn: ``{"content": "text"}``, ``{"json": <any JSON>}`` (answered as JSON text) or
  ``{"tool_calls": [{"name": "f", "arguments": {...}}, {"type": "custom", "name": "g", "input": "..."}]}``;
* several: ``{"turns": [turn, turn, ...]}``: turn ``i`` answers once the conversation holds ``i``
  assistant messages after the user message that asked the question; past the last turn the
  gateway answers as if the question were not in the key.

Validation happens when the key is loaded, so a typo fails the test run's start, not a request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

_TURN_KEYS = frozenset({"content", "json", "tool_calls"})


class ScriptError(ValueError):
    """A scripted turn that cannot be used; the message names the place within the entry."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call to answer, scripted or generated: a function (``payload``: its arguments as JSON text) or a
    custom tool (``payload``: its input text)."""

    kind: str
    name: str
    payload: str


@dataclass(frozen=True, slots=True)
class Turn:
    """What the assistant answers: text (plain or JSON), or tool calls."""

    content: str | None = None
    calls: tuple[ToolCall, ...] = ()


def parse_script(value: Any, where: str) -> tuple[Turn, ...]:
    """The turns of one answer-key value (a string is a one-turn text script)."""
    if isinstance(value, str):
        return (Turn(content=value),)
    if not isinstance(value, Mapping):
        raise ScriptError(f"{where}: must be a string or an object (a scripted turn)")
    if "turns" in value:
        turns = value["turns"]
        if set(value) != {"turns"} or not isinstance(turns, list) or not turns:
            raise ScriptError(f"{where}.turns: must be the only key, holding a non-empty array of turns")
        return tuple(_turn(t, f"{where}.turns[{i}]") for i, t in enumerate(turns))
    return (_turn(value, where),)


def _turn(value: Any, where: str) -> Turn:
    if not isinstance(value, Mapping) or len(value) != 1 or next(iter(value)) not in _TURN_KEYS:
        raise ScriptError(f"{where}: a turn is an object with exactly one of 'content', 'json', 'tool_calls'")
    key, body = next(iter(value.items()))
    if key == "content":
        if not isinstance(body, str):
            raise ScriptError(f"{where}.content: must be a string")
        return Turn(content=body)
    if key == "json":
        return Turn(content=_json_text(body, f"{where}.json"))
    if not isinstance(body, Sequence) or isinstance(body, str) or not body:
        raise ScriptError(f"{where}.tool_calls: must be a non-empty array of calls")
    return Turn(calls=tuple(_call(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(body)))


def _call(value: Any, where: str) -> ToolCall:
    if not isinstance(value, Mapping) or not isinstance(value.get("name"), str) or not value["name"]:
        raise ScriptError(f"{where}: must be an object with a non-empty 'name'")
    kind = value.get("type", "function")
    if kind == "custom":
        if not isinstance(value.get("input"), str):
            raise ScriptError(f"{where}.input: a custom tool call needs 'input' text")
        return ToolCall("custom", value["name"], value["input"])
    if kind != "function":
        raise ScriptError(f"{where}.type: must be 'function' or 'custom'")
    arguments = value.get("arguments", {})
    if isinstance(arguments, str):
        try:
            orjson.loads(arguments)
        except orjson.JSONDecodeError as exc:
            raise ScriptError(f"{where}.arguments: a string must hold JSON: {exc}") from exc
        return ToolCall("function", value["name"], arguments)
    if not isinstance(arguments, Mapping):
        raise ScriptError(f"{where}.arguments: must be an object (or a string of JSON)")
    return ToolCall("function", value["name"], _json_text(arguments, f"{where}.arguments"))


def _json_text(value: Any, where: str) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError as exc:
        raise ScriptError(f"{where}: cannot be written as JSON: {exc}") from exc
