"""Which tools the assistant calls this turn: ``tool_choice`` honoured whatever the history.

Agent loops (pydantic-ai's output tool, instructor's retries, langgraph) send the same tools
every turn and rely on ``tool_choice``: ``required`` or a named tool must get a call even after a
``tool`` message, or the loop never ends. The choice is a pure function of the conversation:

* ``none`` → text; a named tool (``{"type": "function"|"custom", ...}``) → that tool;
* ``auto`` → a tool call, except right after a tool result, which gets text;
* ``required`` → a tool call; after a tool result, a tool not yet called in the conversation if
  one is left (so a loop moves on to its final tool);
* which tool: those named in the last user message (as a whole word, ``get_weather`` or
  ``get weather``, in its first ``NAME_SCAN_CHARS`` characters) win, all of them when
  ``parallel_tool_calls`` is true (the default), the first named otherwise; else one picked by a
  hash of the conversation. The names are found in one scan of the text by one regex built as a
  trie of every spelling (not one search per tool: 128 tools in a 1 MB message took 30 s);
* ``allowed_tools`` narrows the tools and sets the mode; legacy ``functions``/``function_call``
  work the same with at most one call, answered in their own shape by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evaljig_gateway import _content, _validation
from evaljig_gateway._assistant import conversation_seed
from evaljig_gateway._errors import invalid, missing
from evaljig_gateway._limits import check_product


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool the request declares: a function (with a parameters schema) or a custom tool (free text)."""

    kind: str
    name: str
    where: str  # the request field that declares it, for errors
    parameters: Mapping[str, Any] | None = None
    grammar: tuple[str, str] | None = None  # a custom tool's (syntax, definition)


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """The request's tool policy: mode (none/auto/required), the tools it may call, and the call shape."""

    mode: str
    allowed: tuple[Tool, ...]
    parallel: bool
    legacy: bool = False


_NO_TOOLS = ToolChoice("none", (), True)
#: Characters of the last user message searched for tool names (an eval's message naming a tool is far shorter).
NAME_SCAN_CHARS = 64 * 1024
#: OpenAI's limit on a function name's length; longer names are a 400.
MAX_NAME_CHARS = 64


def check_tool_count(tools: Any, param: str, max_tools: int) -> None:
    """400 naming ``param`` when it lists more than ``max_tools`` tools, or a tool name is over ``MAX_NAME_CHARS``."""
    if not isinstance(tools, list):
        return
    check_product(param, "tools declared", len(tools), max_tools, "--max-tools")
    for i, tool in enumerate(tools):
        spec = tool.get("function") or tool.get("custom") if isinstance(tool, dict) else None
        name = (spec if isinstance(spec, dict) else tool if isinstance(tool, dict) else {}).get("name")
        if isinstance(name, str) and len(name) > MAX_NAME_CHARS:
            raise invalid(f"{param}[{i}]", f"a tool name of {len(name):,} characters is over {MAX_NAME_CHARS}")


_TOOL_FIELDS = frozenset({"tools", "tool_choice", "parallel_tool_calls", "functions", "function_call"})


def tool_choice_of(body: dict[str, Any], max_tools: int) -> ToolChoice:
    """Validate ``tools``/``tool_choice``/``parallel_tool_calls`` (or legacy ``functions``/``function_call``).

    More than ``max_tools`` tools (``Limits.max_tools``) is a 400 before any of them is read.
    """
    if _TOOL_FIELDS.isdisjoint(body):
        return _NO_TOOLS  # plain chat, the hot path: nothing to check
    for field in ("tools", "functions"):
        check_tool_count(body.get(field), field, max_tools)
    if body.get("functions") is not None:
        if body.get("tools") is not None:
            raise invalid("functions", "cannot be combined with 'tools'")
        return _legacy(body)
    tools = _tools(body)
    parallel = _validation.optional(body, "parallel_tool_calls", _validation.BOOLEAN) is not False  # null: true
    choice = body.get("tool_choice")
    if not tools:
        if choice not in (None, "none"):
            raise invalid("tool_choice", "is only allowed when 'tools' are specified")
        return ToolChoice("none", (), parallel)
    if choice is None or choice in ("none", "auto", "required"):
        return ToolChoice(choice or "auto", tuple(tools), parallel)
    if isinstance(choice, dict):
        kind = choice.get("type", "function")
        if kind in ("function", "custom"):
            return ToolChoice("required", (_named(tools, kind, choice.get(kind), "tool_choice"),), parallel)
        if kind == "allowed_tools":
            return _allowed(tools, choice.get("allowed_tools"), parallel)
    raise invalid("tool_choice", "must be 'none', 'auto', 'required' or a function, custom or allowed_tools object")


def calls_for(choice: ToolChoice, messages: list[dict[str, Any]]) -> list[Tool]:
    """The tools to call now (empty: answer text)."""
    if choice.mode == "none" or not choice.allowed:
        return []
    after_tool = messages[-1].get("role") in ("tool", "function")
    if choice.mode == "auto" and after_tool:
        return []
    text = next((_content.message_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    named = [choice.allowed[i] for i in first_named([t.name for t in choice.allowed], text)]
    pool = named or list(choice.allowed)
    if after_tool:
        called = _called(messages)
        pool = [t for t in pool if t.name not in called] or [t for t in choice.allowed if t.name not in called] or pool
        named = [t for t in named if t in pool]
    if named:
        return named if choice.parallel and not choice.legacy else named[:1]
    return [pool[int(conversation_seed(messages)[:16], 16) % len(pool)]]  # the digest's first 8 bytes


# --------------------------------------------------------------------------- declarations


def _tools(body: dict[str, Any]) -> list[Tool]:
    """The declared tools, in order: the custom ones are checked first, then the function ones."""
    raw = body.get("tools")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise invalid("tools", "must be an array")
    customs = {
        i: _custom(tool.get("custom"), f"tools[{i}].custom")
        for i, tool in enumerate(raw)
        if isinstance(tool, dict) and tool.get("type") == "custom"
    }
    return [customs[i] if i in customs else _chat_tool(tool, f"tools[{i}]") for i, tool in enumerate(raw)]


def _chat_tool(tool: Any, where: str) -> Tool:
    function = tool.get("function") if isinstance(tool, dict) else None
    if not isinstance(function, dict) or tool.get("type") != "function":
        raise invalid(where, "must be {'type': 'function', 'function': {...}}")
    return declared_function(function, f"{where}.function")


def declared_function(spec: Any, where: str) -> Tool:
    """The function ``spec`` declares at ``where``; a 400 naming the field (``where.parameters...`` for a
    schema error) when it is not one."""
    name = name_of(spec, where)
    params = spec.get("parameters")
    if params is not None and not isinstance(params, dict):
        raise invalid(f"{where}.parameters", "must be a JSON Schema object")
    if params:
        _validation.check_schema(params, f"{where}.parameters")
    return Tool("function", name, where, params)


def name_of(spec: Any, where: str) -> str:
    """The name a declared function or custom tool must have; a 400 naming ``where`` without one."""
    if not isinstance(spec, dict):
        raise invalid(where, "must be an object with a 'name'")
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise missing(f"{where}.name")
    return name


def _custom(spec: Any, where: str) -> Tool:
    name = name_of(spec, where)
    fmt = spec.get("format")
    if fmt is None or (isinstance(fmt, dict) and fmt.get("type") == "text"):
        return Tool("custom", name, where)
    grammar: Any = fmt.get("grammar") if isinstance(fmt, dict) and fmt.get("type") == "grammar" else None
    syntax = grammar.get("syntax") if isinstance(grammar, dict) else None
    if syntax not in ("lark", "regex") or not isinstance(grammar.get("definition"), str):
        reason = "must be {'type': 'text'} or a grammar {'syntax': 'lark'|'regex', 'definition'}"
        raise invalid(f"{where}.format", reason)
    return Tool("custom", name, where, grammar=(syntax, grammar["definition"]))


def _named(tools: list[Tool], kind: str, spec: Any, param: str) -> Tool:
    wanted = spec.get("name") if isinstance(spec, dict) else None
    if not isinstance(wanted, str):
        raise invalid(param, f"a {kind} choice needs {{'{kind}': {{'name': ...}}}}")
    for tool in tools:
        if tool.name == wanted and tool.kind == kind:
            return tool
    raise invalid(param, f"names a {kind} that is not in 'tools': {wanted!r}")


def _allowed(tools: list[Tool], spec: Any, parallel: bool) -> ToolChoice:
    param = "tool_choice.allowed_tools"
    if not isinstance(spec, dict) or spec.get("mode") not in ("auto", "required"):
        raise invalid(param, "must be {'mode': 'auto'|'required', 'tools': [...]}")
    listed = spec.get("tools")
    if not isinstance(listed, list) or not listed:
        raise invalid(f"{param}.tools", "must be a non-empty array of tool references")
    allowed: list[Tool] = []
    for i, ref in enumerate(listed):
        kind = ref.get("type", "function") if isinstance(ref, dict) else None
        if kind not in ("function", "custom"):
            raise invalid(f"{param}.tools[{i}]", "must be {'type': 'function'|'custom', ...}")
        allowed.append(_named(tools, kind, ref.get(kind), f"{param}.tools[{i}]"))
    return ToolChoice(spec["mode"], tuple(allowed), parallel)


def _legacy(body: dict[str, Any]) -> ToolChoice:
    functions = body["functions"]
    if not isinstance(functions, list) or not functions:
        raise invalid("functions", "must be a non-empty array of function objects")
    tools = [declared_function(f, f"functions[{i}]") for i, f in enumerate(functions)]
    choice = body.get("function_call")
    if choice is None or choice in ("none", "auto"):
        return ToolChoice(choice or "auto", tuple(tools), False, legacy=True)
    if isinstance(choice, dict):
        return ToolChoice("required", (_named(tools, "function", choice, "function_call"),), False, legacy=True)
    raise invalid("function_call", "must be 'none', 'auto' or {'name': ...}")


# --------------------------------------------------------------------------- the conversation


def first_named(names: list[str], text: str) -> list[int]:
    """Indexes of the ``names`` the text mentions as a word (``get_weather``, ``get weather``; any case), by mention.

    One regex, a trie of every spelling, scans the first ``NAME_SCAN_CHARS`` of the lower-cased
    text once, whatever the number of names, and stops when every name was found. At one place
    the trie takes the longest spelling (``get weather`` over ``get``).
    """
    spellings: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        for spelling in dict.fromkeys((name.lower(), name.replace("_", " ").lower())):
            spellings.setdefault(spelling, []).append(i)
    found: dict[int, int] = {}
    scan = re.compile(rf"(?<!\w){_trie_regex(list(spellings))}(?!\w)")
    for hit in scan.finditer(text[:NAME_SCAN_CHARS].lower()):
        for i in spellings.get(hit.group(), ()):
            found.setdefault(i, hit.start())
        if len(found) == len(names):
            break
    return sorted(found, key=lambda i: (found[i], i))


def _trie_regex(words: list[str]) -> str:
    """A regex matching exactly ``words``, as a trie: at each character one branch is followed, not one per word."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        branches = [re.escape(char) + emit(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = "(?:" + "|".join(branches) + ")"
        return body + "?" if "" in node else body

    return emit(trie)


def _called(messages: list[dict[str, Any]]) -> set[str]:
    """Names of the tools the assistant already called in this conversation."""
    specs: list[Any] = []
    for message in messages:
        if message.get("role") == "assistant":
            calls = [call for call in message.get("tool_calls") or [] if isinstance(call, dict)]
            specs += [call.get("function") or call.get("custom") for call in calls]
            specs.append(message.get("function_call"))
    return {spec["name"] for spec in specs if isinstance(spec, dict) and isinstance(spec.get("name"), str)}
