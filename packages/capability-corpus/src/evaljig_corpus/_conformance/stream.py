"""Streamed chat completions: SSE framing, one chunk sequence per choice, ``[DONE]`` last, optional usage."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaljig_corpus._checks import Checker
from evaljig_corpus._conformance.shared import FINISH_REASONS, check_head, request_body
from evaljig_corpus._transport import DEFAULT_TIMEOUT, Target, client_for, parse_event, post_sse

DONE = "[DONE]"


def assert_stream_conformance(
    target: Target,
    *,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None = None,
    max_tokens: int | None = None,
    stream_options: Mapping[str, Any] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> list[dict[str, Any]]:
    """POST a chat completion with ``stream: true``; check every chunk and the framing; return the chunks."""
    check = Checker("stream")
    body = request_body(
        model=model, messages=messages, max_tokens=max_tokens, stream=True, stream_options=stream_options
    )
    with client_for(target, timeout) as client:
        events = post_sse(check, client, "/chat/completions", body)
    if not events or events[-1] != DONE:
        check.fail("stream", f"must end with 'data: {DONE}'")
    if events.count(DONE) != 1:
        check.fail("stream", f"must carry exactly one 'data: {DONE}', as its last event")
    chunks = [parse_event(check, data, f"events[{k}]") for k, data in enumerate(events[:-1])]
    if not chunks:
        check.fail("stream", "must carry at least one chunk before [DONE]")
    include_usage = isinstance(stream_options, Mapping) and bool(stream_options.get("include_usage"))
    first_id = chunks[0].get("id")
    texts: dict[int, str] = {}
    finished: set[int] = set()
    for k, chunk in enumerate(chunks):
        where = f"events[{k}]"
        check_head(check, chunk, "chat.completion.chunk", where)
        check.equal(chunk.get("id"), first_id, f"{where}.id")
        choices = check.arr(chunk.get("choices"), f"{where}.choices")
        if include_usage and k < len(chunks) - 1 and chunk.get("usage") is not None:
            check.fail(f"{where}.usage", "must be null on every chunk but the last when include_usage is set")
        for c, raw in enumerate(choices):
            _choice_delta(check, check.obj(raw, f"{where}.choices[{c}]"), f"{where}.choices[{c}]", texts, finished)
    if not texts or finished != set(texts):
        check.fail(
            "stream",
            f"every choice must end with one finish_reason; started {sorted(texts)}, finished {sorted(finished)}",
        )
    if include_usage:
        _check_final_usage(check, chunks, max_tokens)
    return chunks


def _check_final_usage(check: Checker, chunks: list[dict[str, Any]], max_tokens: int | None) -> None:
    """The last chunk carries only ``usage``, whose completion stays within ``max_tokens`` (as in ``chat``)."""
    where = f"events[{len(chunks) - 1}]"
    last = chunks[-1]
    check.equal(last.get("choices"), [], f"{where}.choices")
    usage = check.usage(last.get("usage"), f"{where}.usage")
    if max_tokens is not None and usage["completion_tokens"] > max_tokens:
        check.fail(f"{where}.usage.completion_tokens", f"must be <= max_tokens ({max_tokens})")


def _choice_delta(
    check: Checker, choice: dict[str, Any], where: str, texts: dict[int, str], finished: set[int]
) -> None:
    """Accumulate one choice's delta; nothing may follow its finish_reason."""
    index = check.integer(choice.get("index"), f"{where}.index", minimum=0)
    if index in finished:
        check.fail(f"{where}.index", f"choice {index} sent a chunk after its finish_reason")
    delta = check.obj(choice.get("delta"), f"{where}.delta")
    if "role" in delta and delta["role"] is not None:
        check.equal(delta["role"], "assistant", f"{where}.delta.role")
    piece = delta.get("content")
    texts[index] = texts.get(index, "") + (check.string(piece, f"{where}.delta.content") if piece is not None else "")
    reason = choice.get("finish_reason")
    if reason is not None:
        check.one_of(reason, FINISH_REASONS, f"{where}.finish_reason")
        finished.add(index)
