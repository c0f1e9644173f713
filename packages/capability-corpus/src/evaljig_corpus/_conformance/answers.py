"""Answers that score silently wrong: reasoning with ``content`` empty (``reasoning``), a cut answer (``truncation``).

An eval reads ``message.content`` and ``finish_reason``; a reasoning model that spends its budget
thinking leaves ``content`` empty, and an answer cut at its token budget ends with ``length``.
Both reach a scorer as ordinary answers, so these checks name them: a target that *plays* such a
model (a fake, a proxy in front of one) must break the check in exactly that way, which is what the
``invalid_*`` fixtures of these capabilities expect.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaljig_corpus._checks import Checker
from evaljig_corpus._conformance.shared import FINISH_REASONS, check_choices, check_head, request_body
from evaljig_corpus._transport import DEFAULT_TIMEOUT, Target, client_for, parse_event, post_json, post_sse

PATH = "/chat/completions"
DONE = "[DONE]"
#: Where OpenAI-compatible servers put a model's reasoning: vLLM, DeepSeek and litellm use
#: ``reasoning_content``; OpenRouter and newer vLLM ``reasoning``.
REASONING_FIELDS = ("reasoning_content", "reasoning")
EMPTY_CONTENT = "is empty while the model answered: a scorer reading content scores nothing"


def assert_reasoning_conformance(
    target: Target,
    *,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None = None,
    max_tokens: int | None = None,
    stream: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, str]:
    """A reasoning model's chat answer: its reasoning, a non-empty ``content`` and ``finish_reason: stop``.

    Streamed or not; returns ``{"reasoning": ..., "content": ..., "finish_reason": ...}``.
    """
    check = Checker("reasoning")
    answer = _answer(check, target, model, messages, max_tokens, stream, timeout)
    where = "stream" if stream else "choices[0].message"
    if not answer["reasoning"]:
        check.fail(f"{where}.reasoning", f"must carry the model's reasoning (in {' or '.join(REASONING_FIELDS)})")
    if not answer["content"]:
        check.fail(f"{where}.content", EMPTY_CONTENT)
    _complete(check, answer, stream)
    return answer


def assert_truncation_conformance(
    target: Target,
    *,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None = None,
    max_tokens: int | None = None,
    stream: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, str]:
    """A complete chat answer: non-empty ``content`` ending with ``finish_reason: stop``, streamed or not."""
    check = Checker("truncation")
    answer = _answer(check, target, model, messages, max_tokens, stream, timeout)
    _complete(check, answer, stream)
    if not answer["content"]:
        check.fail(f"{'stream' if stream else 'choices[0].message'}.content", EMPTY_CONTENT)
    return answer


def _complete(check: Checker, answer: Mapping[str, str], stream: bool) -> None:
    reason = answer["finish_reason"]
    if reason != "stop":
        where = "stream.finish_reason" if stream else "choices[0].finish_reason"
        check.fail(where, f"must be 'stop' for a complete answer, got {reason!r}: the answer was cut short")


def _answer(
    check: Checker,
    target: Target,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None,
    max_tokens: int | None,
    stream: bool,
    timeout: float,
) -> dict[str, str]:
    body = request_body(model=model, messages=messages, max_tokens=max_tokens, stream=True if stream else None)
    with client_for(target, timeout) as client:
        if stream:
            return _streamed(check, post_sse(check, client, PATH, body))
        data = post_json(check, client, PATH, body)
    check_head(check, data, "chat.completion")
    choice = check_choices(check, data, 1)[0]
    message = check.obj(choice.get("message"), "choices[0].message")
    check.equal(message.get("role"), "assistant", "choices[0].message.role")
    content = message.get("content")
    return {
        "reasoning": _reasoning(check, message, "choices[0].message"),
        "content": "" if content is None else check.string(content, "choices[0].message.content"),
        "finish_reason": str(choice.get("finish_reason")),
    }


def _reasoning(check: Checker, part: Mapping[str, Any], where: str) -> str:
    """The reasoning text of a message or a delta, from whichever field the target uses."""
    for name in REASONING_FIELDS:
        value = part.get(name)
        if value is not None:
            return check.string(value, f"{where}.{name}")
    return ""


def _streamed(check: Checker, events: list[str]) -> dict[str, str]:
    """Rebuild one choice's reasoning, content and finish reason from its chunks (``[DONE]`` last, once)."""
    if not events or events[-1] != DONE or events.count(DONE) != 1:
        check.fail("stream", f"must end with exactly one 'data: {DONE}'")
    reasoning, content, finish = [], [], "none"
    for k, data in enumerate(events[:-1]):
        chunk = parse_event(check, data, f"events[{k}]")
        check_head(check, chunk, "chat.completion.chunk", f"events[{k}]")
        for c, raw in enumerate(check.arr(chunk.get("choices"), f"events[{k}].choices")):
            where = f"events[{k}].choices[{c}]"
            choice = check.obj(raw, where)
            delta = check.obj(choice.get("delta"), f"{where}.delta")
            reasoning.append(_reasoning(check, delta, f"{where}.delta"))
            piece = delta.get("content")
            content.append("" if piece is None else check.string(piece, f"{where}.delta.content"))
            if choice.get("finish_reason") is not None:
                check.one_of(choice["finish_reason"], FINISH_REASONS, f"{where}.finish_reason")
                finish = choice["finish_reason"]
    return {"reasoning": "".join(reasoning), "content": "".join(content), "finish_reason": finish}
