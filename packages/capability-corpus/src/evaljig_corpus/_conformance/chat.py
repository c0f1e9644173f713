"""Chat completions: plain answers (``chat``) and token log-probabilities (``logprobs``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaljig_corpus._checks import Checker
from evaljig_corpus._conformance.shared import check_choices, check_head, request_body
from evaljig_corpus._transport import DEFAULT_TIMEOUT, Target, client_for, post_json

PATH = "/chat/completions"
_EXCERPT = 120


def assert_chat_conformance(
    target: Target,
    *,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    n: int | None = None,
    stop: str | Sequence[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """POST a chat completion and check the answer's shape, types and ``usage`` arithmetic; return the body."""
    check = Checker("chat")
    body = request_body(model=model, messages=messages, max_tokens=max_tokens, temperature=temperature, n=n, stop=stop)
    with client_for(target, timeout) as client:
        data = post_json(check, client, PATH, body)
    check_head(check, data, "chat.completion")
    for i, choice in enumerate(check_choices(check, data, n or 1)):
        message = check.obj(choice.get("message"), f"choices[{i}].message")
        check.equal(message.get("role"), "assistant", f"choices[{i}].message.role")
        check.string(message.get("content"), f"choices[{i}].message.content")
        check.one_of(choice.get("finish_reason"), ("stop", "length", "content_filter"), f"choices[{i}].finish_reason")
    usage = check.usage(data.get("usage"))
    if max_tokens is not None and usage["completion_tokens"] > max_tokens * (n or 1):
        check.fail("usage.completion_tokens", f"must be <= max_tokens x n ({max_tokens * (n or 1)})")
    return data


def assert_logprobs_conformance(
    target: Target,
    *,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None = None,
    logprobs: bool | None = None,
    top_logprobs: int | None = None,
    max_tokens: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """POST a chat completion asking for log-probabilities; check each token's logprob and alternatives."""
    check = Checker("logprobs")
    body = request_body(
        model=model, messages=messages, logprobs=logprobs, top_logprobs=top_logprobs, max_tokens=max_tokens
    )
    with client_for(target, timeout) as client:
        data = post_json(check, client, PATH, body)
    check_head(check, data, "chat.completion")
    for i, choice in enumerate(check_choices(check, data, 1)):
        where = f"choices[{i}].logprobs"
        message = check.obj(choice.get("message"), f"choices[{i}].message")
        text = check.string(message.get("content"), f"choices[{i}].message.content")
        content = check.arr(check.obj(choice.get("logprobs"), where).get("content"), f"{where}.content", non_empty=True)
        entries = [check.obj(raw, f"{where}.content[{k}]") for k, raw in enumerate(content)]
        for k, entry in enumerate(entries):
            _check_token(check, entry, f"{where}.content[{k}]", top_logprobs)
        _check_spells(check, entries, text, f"{where}.content")
    check.usage(data.get("usage"))
    return data


def _check_spells(check: Checker, entries: list[dict[str, Any]], text: str, where: str) -> None:
    """The tokens, in order, spell the answer, so the log-probabilities are those of the text returned.

    Joined as bytes where a token gives them: a token may hold part of a multi-byte character.
    """
    joined = b"".join(bytes(e["bytes"]) if e.get("bytes") is not None else e["token"].encode() for e in entries)
    if joined != text.encode():
        spelled = joined.decode(errors="replace")
        check.fail(where, f"tokens must join to the message content {text[:_EXCERPT]!r}, got {spelled[:_EXCERPT]!r}")


def _check_token(check: Checker, entry: dict[str, Any], where: str, top: int | None) -> None:
    """A log-probability is finite and <= 0; exactly ``top`` alternatives when asked, best first."""
    check.string(entry.get("token"), f"{where}.token")
    check.number(entry.get("logprob"), f"{where}.logprob", maximum=0.0)
    raw_bytes = entry.get("bytes")
    if raw_bytes is not None:
        for b, value in enumerate(check.arr(raw_bytes, f"{where}.bytes")):
            byte = check.integer(value, f"{where}.bytes[{b}]", minimum=0)
            if byte > 255:
                check.fail(f"{where}.bytes[{b}]", f"must be a byte (0..255), got {byte}")
    alternatives = check.arr(entry.get("top_logprobs"), f"{where}.top_logprobs")
    if top is not None and len(alternatives) != top:
        check.fail(f"{where}.top_logprobs", f"must hold exactly top_logprobs={top} entries, got {len(alternatives)}")
    previous = 0.0
    for a, raw in enumerate(alternatives):
        alt = check.obj(raw, f"{where}.top_logprobs[{a}]")
        check.string(alt.get("token"), f"{where}.top_logprobs[{a}].token")
        value = check.number(alt.get("logprob"), f"{where}.top_logprobs[{a}].logprob", maximum=0.0)
        if value > previous:
            check.fail(f"{where}.top_logprobs[{a}].logprob", "alternatives must be sorted from most to least likely")
        previous = value
