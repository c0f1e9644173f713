"""What the content behaviours do to an answer: ``reasoning``, ``think-empty``, ``length``,
``bad-tool-args``, ``unknown-tool`` and ``context-<n>``.

Each endpoint handler knows its reply's shape (a chat message, a completion's text, a Responses
item) and asks this module for the pieces, so the three endpoints agree on what a behaviour
means: the same reasoning text, the same cut, the same broken arguments.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import orjson

from evaljig_gateway import _tokenizer
from evaljig_gateway._behaviours import Behaviour
from evaljig_gateway._errors import GatewayError

#: The name ``unknown-tool`` calls (a numbered suffix when a tool of this name was offered).
UNKNOWN_TOOL = "evaljig_unknown_tool"


class Shaped(NamedTuple):
    """An answer after the content behaviours: its reasoning (None for none), text and finish reason
    (a tuple: every chat, completion and Responses choice makes one)."""

    reasoning: str | None
    text: str
    finish: str


def reasoning_for(behaviour: Behaviour, prompt: str) -> str | None:
    """A deterministic chain of thought about ``prompt`` (its first 120 characters, whitespace folded) when
    ``behaviour`` thinks (``reasoning``, ``think-empty``); None when it does not."""
    if not (behaviour.reasoning or behaviour.think_empty):
        return None
    head = " ".join(prompt.split())[:120]
    return f'The question is "{head}". I recall what I know about it, check it once, and answer briefly.'


def shaped(behaviour: Behaviour, prompt: str, text: str, finish: str) -> Shaped:
    """``text`` (already cut by ``max_tokens``/``stop`` into ``finish``) with ``behaviour``'s reasoning and cut.

    ``think-empty`` keeps the reasoning and empties the answer; ``length`` keeps the first half of the
    answer's tokens and finishes with ``length`` (with ``think-empty``: an empty answer, ``length``, as a
    thinking model that spent its budget thinking).
    """
    reasoning = reasoning_for(behaviour, prompt)
    if behaviour.think_empty:
        text = ""
    if behaviour.length:
        pieces = _tokenizer.pieces(text)
        text, finish = "".join(pieces[: len(pieces) // 2]), "length"
    return Shaped(reasoning, text, finish)


def tool_name(behaviour: Behaviour, name: str, offered: list[str]) -> str:
    """The called tool's name: ``unknown-tool`` swaps it for one that was not offered."""
    if not behaviour.unknown_tool:
        return name
    unknown, n = UNKNOWN_TOOL, 1
    while unknown in offered:
        n += 1
        unknown = f"{UNKNOWN_TOOL}_{n}"
    return unknown


def tool_arguments(behaviour: Behaviour, arguments: str) -> str:
    """The call's arguments: ``bad-tool-args`` cuts the JSON text in half, so it never parses."""
    if not behaviour.bad_tool_args:
        return arguments
    broken = arguments[: len(arguments) // 2] if arguments.startswith("{") else "{" + arguments
    try:
        orjson.loads(broken)
    except orjson.JSONDecodeError:
        return broken
    return broken + ","  # ``"{" + "}"``: a trailing comma never parses


def check_context(
    behaviour: Behaviour,
    prompt_tokens: int,
    endpoint: Literal["chat", "completions", "responses"],
    max_tokens: int | None = None,
) -> None:
    """OpenAI's 400 ``context_length_exceeded`` when ``context-<n>`` is set and the prompt is over N tokens.

    The message is each endpoint's own: chat's "your messages resulted in", the legacy completions'
    "you requested ... in your prompt", the Responses API's "Your input exceeds the context window".
    """
    limit = behaviour.context_tokens
    if limit is None or prompt_tokens <= limit:
        return
    if endpoint == "chat":
        message = (
            f"This model's maximum context length is {limit} tokens. However, your messages resulted in "
            f"{prompt_tokens} tokens. Please reduce the length of the messages."
        )
        param: str | None = "messages"
    elif endpoint == "completions":
        asked = max_tokens or 0
        message = (
            f"This model's maximum context length is {limit} tokens, however you requested {prompt_tokens + asked} "
            f"tokens ({prompt_tokens} in your prompt; {asked} for the completion). Please reduce your prompt; "
            "or completion length."
        )
        param = "prompt"
    else:
        message = "Your input exceeds the context window of this model. Please adjust your input and try again."
        param = "input"
    raise GatewayError(400, message, param=param, code="context_length_exceeded")
