"""Legacy text completions: choices per prompt, ``echo`` semantics, ``usage`` arithmetic."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evaljig_corpus._checks import Checker
from evaljig_corpus._conformance.shared import check_choices, check_head, request_body
from evaljig_corpus._transport import DEFAULT_TIMEOUT, Target, client_for, post_json


def assert_completion_conformance(
    target: Target,
    *,
    model: str,
    prompt: str | Sequence[str] | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    echo: bool | None = None,
    stop: str | Sequence[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """POST a text completion and check its shape, types, echo and ``usage``; return the body."""
    check = Checker("completion")
    body = request_body(
        model=model, prompt=prompt, max_tokens=max_tokens, temperature=temperature, echo=echo, stop=stop
    )
    with client_for(target, timeout) as client:
        data = post_json(check, client, "/completions", body)
    check_head(check, data, "text_completion")
    prompts = [prompt] if isinstance(prompt, str) else list(prompt or [])
    for i, choice in enumerate(check_choices(check, data, max(len(prompts), 1))):
        text = check.string(choice.get("text"), f"choices[{i}].text")
        check.one_of(choice.get("finish_reason"), ("stop", "length", "content_filter"), f"choices[{i}].finish_reason")
        if echo and i < len(prompts) and not text.startswith(prompts[i]):
            check.fail(f"choices[{i}].text", "must start with the prompt when echo is true")
    usage = check.usage(data.get("usage"))
    if max_tokens is not None and usage["completion_tokens"] > max_tokens * max(len(prompts), 1):
        check.fail("usage.completion_tokens", f"must be <= max_tokens per prompt ({max_tokens})")
    return data
