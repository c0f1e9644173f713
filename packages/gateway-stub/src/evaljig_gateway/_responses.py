"""``POST /v1/responses``: the Responses API with function tools, ``text.format`` and streaming.

* ``tools`` of ``type: "function"`` (the flat Responses shape) are called as ``function_call``
  output items (``call_id``, ``arguments`` as a JSON string fitting the tool's parameters).
  With ``tool_choice`` ``auto`` (the default) the model calls a tool unless the input ends with a
  ``function_call_output`` (the tool answered: it finishes with text, as an agent loop expects);
  ``required`` or a named function always calls, ``none`` never does. The tool named in the last
  user message wins, else the first one offered.
* ``text.format``: ``json_schema`` answers an instance of the schema, ``json_object`` a JSON object;
  an answer key's answer is used as the JSON when it parses as such.
* ``stream: true`` sends OpenAI's event sequence (``response.created``, ``response.in_progress``,
  ``response.output_item.added``, ``response.content_part.added``, ``response.output_text.delta``...,
  ``response.output_text.done``, ``response.content_part.done``, ``response.output_item.done``,
  ``response.completed``; ``response.function_call_arguments.delta``/``.done`` for a call), each
  with its ``sequence_number``, as ``event:`` + ``data:`` lines.
"""

from __future__ import annotations

import contextlib
from typing import Any

import orjson

from evaljig_gateway import _assistant, _content, _shaping, _tokenizer, _validation
from evaljig_gateway._behaviours import behaviour_for
from evaljig_gateway._errors import invalid, missing
from evaljig_gateway._limits import OutputBudget
from evaljig_gateway._replies import SSE, Reply, json_reply
from evaljig_gateway._request import Request, answer, check_prompt
from evaljig_gateway._schema_instance import instance_json
from evaljig_gateway._tool_choice import Tool, check_tool_count, declared_function, first_named

_ITEM_TYPES = frozenset({"message", "function_call", "function_call_output", "reasoning", "item_reference"})
_FORMATS = ("text", "json_object", "json_schema")
_ROLES = ("user", "assistant", "system", "developer")
#: The field holding an input item's text, by item type (a function call's text is its name and arguments).
_TEXT_FIELDS = {"message": "content", "function_call_output": "output"}
#: An output item as ``response.output_item.added`` announces it: nothing generated yet.
_ADDED: dict[str, dict[str, Any]] = {
    "reasoning": {"summary": []},
    "function_call": {"arguments": "", "status": "in_progress"},
    "message": {"status": "in_progress", "content": []},
}


def _input_items(raw: Any) -> list[dict[str, Any]]:
    """``input`` as a list of items; a string is one user message."""
    if isinstance(raw, str):
        if not raw:
            raise invalid("input", "must not be empty")
        return [{"type": "message", "role": "user", "content": raw}]
    if not isinstance(raw, list) or not raw:
        raise invalid("input", "must be a string or a non-empty array of input items")
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise invalid(f"input[{i}]", "must be an input item object")
        kind = item.get("type", "message")
        if not isinstance(kind, str) or kind not in _ITEM_TYPES:  # a list or object is unhashable: the type first
            raise invalid(f"input[{i}].type", f"must be one of {', '.join(sorted(_ITEM_TYPES))}")
        if kind == "message":
            if "content" not in item or "role" not in item:
                raise invalid(f"input[{i}]", "must be a message object with 'role' and 'content'")
            if not isinstance(item["role"], str) or item["role"] not in _ROLES:
                raise invalid(f"input[{i}].role", f"must be one of {', '.join(_ROLES)}")
            _validation.check_content(item["content"], f"input[{i}].content")
        if kind == "function_call_output":
            if not isinstance(item.get("call_id"), str) or not item["call_id"]:
                raise missing(f"input[{i}].call_id")
            if "output" not in item:
                raise missing(f"input[{i}].output")
            _validation.check_content(item["output"], f"input[{i}].output")
        for name in ("name", "arguments", "call_id", "id"):
            if name in item and not isinstance(item[name], str):
                raise invalid(f"input[{i}].{name}", "must be a string")
    return raw


def _item_text(item: dict[str, Any]) -> str:
    """What an input item says: a message's content, a call's name and arguments, a call's output."""
    kind = item.get("type", "message")
    if kind == "function_call":
        return f"{item.get('name', '')} {item.get('arguments', '')}"
    return _content.message_text(item.get(_TEXT_FIELDS[kind])) if kind in _TEXT_FIELDS else ""


def _tools(body: dict[str, Any], max_tools: int) -> list[Tool]:
    """The function tools offered (other tool types are accepted and never called)."""
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise invalid("tools", "must be an array")
    check_tool_count(tools, "tools", max_tools)  # absent or null: no tools
    functions = []
    for i, tool in enumerate(tools or []):
        if not isinstance(tool, dict) or not isinstance(tool.get("type"), str):
            raise invalid(f"tools[{i}]", "must be an object with a 'type'")
        if tool["type"] == "function":  # the flat shape: name and parameters at the top
            functions.append(declared_function(tool, f"tools[{i}]"))
    return functions


def _chosen_tool(choice: Any, tools: list[Tool], items: list[dict[str, Any]]) -> Tool | None:
    """The function ``tool_choice`` calls (None, absent or null, is ``auto``), or None to answer text."""
    if isinstance(choice, dict) and choice.get("type") == "function" and isinstance(choice.get("name"), str):
        wanted = [tool for tool in tools if tool.name == choice["name"]]
        if not wanted:
            raise invalid("tool_choice", f"names a function that is not in 'tools': {choice['name']!r}")
        return wanted[0]
    if choice not in (None, "none", "auto", "required"):
        raise invalid("tool_choice", "must be 'none', 'auto', 'required' or {'type': 'function', 'name': ...}")
    if choice == "required" and not tools:
        raise invalid("tool_choice", "'required' needs at least one function in 'tools'")
    if choice == "none" or not tools:
        return None
    if choice in (None, "auto") and items[-1].get("type") == "function_call_output":
        return None  # the tool answered: finish with text
    last_user = next((_item_text(i) for i in reversed(items) if i.get("role") == "user"), "")
    named = first_named([tool.name for tool in tools], last_user)
    return tools[named[0]] if named else tools[0]


def _text_format(body: dict[str, Any]) -> dict[str, Any]:
    text = body.get("text")
    if text is not None and not isinstance(text, dict):
        raise invalid("text", "must be an object")
    fmt = (text or {}).get("format", {"type": "text"})
    if not isinstance(fmt, dict) or fmt.get("type") not in _FORMATS:
        raise invalid("text.format.type", f"must be one of {', '.join(_FORMATS)}")
    if fmt["type"] == "json_schema":
        if not isinstance(fmt.get("name"), str) or not fmt["name"]:
            raise missing("text.format.name")
        if not isinstance(fmt.get("schema"), dict):
            raise invalid("text.format.schema", "must be a JSON Schema object")
    return fmt


def _formatted(fmt: dict[str, Any], known: str | None, prompt: str, budget: OutputBudget) -> str:
    """The JSON text to answer for a JSON ``text.format`` (``json_object`` or ``json_schema``)."""
    if known is not None:
        with contextlib.suppress(orjson.JSONDecodeError):  # the keyed answer, when it is JSON
            orjson.loads(known)
            return known
    if fmt["type"] == "json_object":
        return orjson.dumps({"answer": answer(known, prompt, 0)}).decode()
    return instance_json(fmt["schema"], seed=prompt, budget=budget, param="text.format.schema")


def handle(req: Request) -> Reply:
    """``POST /v1/responses``."""
    body = req.body
    items = _input_items(_validation.required(body, "input"))
    stream = _validation.optional(body, "stream", _validation.BOOLEAN) is True
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise invalid("instructions", "must be a string")
    max_tokens = _validation.optional(body, "max_output_tokens", ("integer", 1, 1_000_000))
    _validation.check_fields(body, _validation.SAMPLING)
    tools = _tools(body, req.limits.max_tools)
    tool = _chosen_tool(body.get("tool_choice"), tools, items)
    fmt = _text_format(body)
    parallel = body.get("parallel_tool_calls", True)
    if not isinstance(parallel, bool):
        raise invalid("parallel_tool_calls", "must be a boolean")

    prompt = "\n".join(_item_text(item) for item in items)
    full_prompt = f"{instructions}\n{prompt}" if instructions else prompt
    check_prompt(req, len(full_prompt), "input")
    input_tokens = _content.count_tokens(full_prompt)
    behaviour = behaviour_for(req.model)
    _shaping.check_context(behaviour, input_tokens, "responses")
    digest = req.digest
    known = req.answers.lookup(full_prompt)
    budget = OutputBudget.of(req.limits)
    finish = "stop"
    if tool is not None:
        generated = _assistant.generated_call(tool, full_prompt, budget)
        [call] = _assistant.broken_calls(behaviour, [generated], [t.name for t in tools])
        output_tokens = _content.count_tokens(call.payload)
        reasoning = _shaping.reasoning_for(behaviour, full_prompt)
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{digest[16:48]}",
            "call_id": f"call_{digest[40:64]}",
            "name": call.name,
            "arguments": call.payload,
            "status": "completed",
        }
    else:
        if fmt["type"] == "text":
            text, finish = _content.truncate(answer(known, full_prompt, 0), max_tokens, [])
        else:
            text = _formatted(fmt, known, full_prompt, budget)  # JSON is never cut: a cut document would not parse
        reasoning, text, finish = _shaping.shaped(behaviour, full_prompt, text, finish)
        output_tokens = _content.count_tokens(text)
        item = {
            "type": "message",
            "id": f"msg_{digest[32:64]}",
            "status": "completed" if finish == "stop" else "incomplete",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
        }
    output = [item]
    reasoning_tokens = 0
    if reasoning is not None:  # the reasoning item comes first, as OpenAI's reasoning models send it
        summary = [{"type": "summary_text", "text": reasoning}]
        output.insert(0, {"type": "reasoning", "id": f"rs_{digest[8:40]}", "summary": summary})
        reasoning_tokens = _content.count_tokens(reasoning)
        output_tokens += reasoning_tokens
    response = {
        "id": f"resp_{digest[:32]}",
        "object": "response",
        "created_at": _content.created_from(digest),
        "status": "completed" if finish == "stop" else "incomplete",
        "background": False,
        "error": None,
        "incomplete_details": None if finish == "stop" else {"reason": "max_output_tokens"},
        "instructions": instructions,
        "max_output_tokens": max_tokens,
        "model": req.model,
        "output": output,
        "parallel_tool_calls": parallel,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": False,
        "temperature": body.get("temperature", 1.0),
        "text": {"format": fmt},
        "tool_choice": body.get("tool_choice") or "auto",
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "total_tokens": input_tokens + output_tokens,
        },
        "metadata": {},
    }
    tokens = input_tokens + output_tokens
    return _event_stream(response, tokens) if stream else json_reply(response, tokens=tokens)


#: A text-bearing item's parts: (list field, index name, part events, text events, extra text-event fields): a
#: message's ``content_part``/``output_text``, a reasoning item's ``reasoning_summary_part``/``_text``.
_PARTS: dict[str, tuple[str, str, str, str, dict[str, Any]]] = {
    "message": ("content", "content_index", "content_part", "output_text", {"logprobs": []}),
    "reasoning": ("summary", "summary_index", "reasoning_summary_part", "reasoning_summary_text", {}),
}


def _event_stream(response: dict[str, Any], tokens: int) -> Reply:
    """OpenAI's Responses event sequence for ``response``, numbered from 0: each text part added, its text
    deltas, text done, part done; a call's argument deltas and done."""
    events: list[dict[str, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append({"type": kind, "sequence_number": len(events), **fields})

    pending = {**response, "status": "in_progress", "output": [], "usage": None, "incomplete_details": None}
    emit("response.created", response=pending)
    emit("response.in_progress", response=pending)
    for index, item in enumerate(response["output"]):
        emit("response.output_item.added", output_index=index, item={**item, **_ADDED[item["type"]]})
        where = {"item_id": item["id"], "output_index": index}
        if item["type"] == "function_call":
            for piece in _tokenizer.pieces(item["arguments"]):
                emit("response.function_call_arguments.delta", **where, delta=piece)
            emit("response.function_call_arguments.done", **where, name=item["name"], arguments=item["arguments"])
        else:
            parts, index_name, part_kind, text_kind, extra = _PARTS[item["type"]]
            for part_index, part in enumerate(item[parts]):
                at = {**where, index_name: part_index}
                emit(f"response.{part_kind}.added", **at, part={**part, "text": ""})
                for piece in _tokenizer.pieces(part["text"]):
                    emit(f"response.{text_kind}.delta", **at, delta=piece, **extra)
                emit(f"response.{text_kind}.done", **at, text=part["text"], **extra)
                emit(f"response.{part_kind}.done", **at, part=part)
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.completed" if response["status"] == "completed" else "response.incomplete", response=response)
    chunks = [b"event: " + event["type"].encode() + b"\ndata: " + orjson.dumps(event) + b"\n\n" for event in events]
    return Reply(200, b"", content_type=SSE, events=chunks, tokens=tokens)
