"""Loglikelihood on legacy completions: echo + ``logprobs`` scores a prompt, as lm_eval's ``local-completions`` does.

A token-id prompt (lm_eval's default) must be echoed one token per id; the echoed tokens must
carry their whitespace and join back to the choice's text, with ``text_offset`` giving where
each starts; the first token has no context, so its ``token_logprobs`` and ``top_logprobs``
entries are null; the others are log-probabilities (<= 0). With ``max_tokens: 0`` the prompt
alone is scored: nothing is generated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evaljig_corpus._checks import Checker
from evaljig_corpus._conformance.shared import check_choices, check_head, request_body
from evaljig_corpus._transport import DEFAULT_TIMEOUT, Target, client_for, post_json

Prompt = str | Sequence[str] | Sequence[int] | Sequence[Sequence[int]]


def _prompts(prompt: Prompt | None) -> list[str | list[int]]:
    """The prompts a request holds: a string, a list of ids (one prompt), or a list of either."""
    if prompt is None:
        return []
    if isinstance(prompt, str):
        return [prompt]
    items: list[Any] = list(prompt)
    if items and all(isinstance(t, int) for t in items):
        return [items]  # one prompt of token ids
    return [p if isinstance(p, str) else list(p) for p in items]


def assert_loglikelihood_conformance(
    target: Target,
    *,
    model: str,
    prompt: Prompt | None = None,
    echo: bool | None = True,
    max_tokens: int | None = 0,
    logprobs: int | None = 1,
    temperature: float | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """POST a scoring request (echo + logprobs) and check the echoed tokens and their log-probabilities."""
    check = Checker("loglikelihood")
    body = request_body(
        model=model, prompt=prompt, echo=echo, max_tokens=max_tokens, logprobs=logprobs, temperature=temperature
    )
    with client_for(target, timeout) as client:
        data = post_json(check, client, "/completions", body)
    check_head(check, data, "text_completion")
    prompts = _prompts(prompt)
    for i, choice in enumerate(check_choices(check, data, max(len(prompts), 1))):
        where = f"choices[{i}]"
        text = check.string(choice.get("text"), f"{where}.text")
        lp = check.obj(choice.get("logprobs"), f"{where}.logprobs")
        tokens = [
            check.string(t, f"{where}.logprobs.tokens[{k}]")
            for k, t in enumerate(check.arr(lp.get("tokens"), f"{where}.logprobs.tokens", non_empty=True))
        ]
        columns = {
            name: check.arr(lp.get(name), f"{where}.logprobs.{name}")
            for name in ("token_logprobs", "top_logprobs", "text_offset")
        }
        for name, column in columns.items():
            if len(column) != len(tokens):
                check.fail(
                    f"{where}.logprobs.{name}", f"must hold one entry per token ({len(tokens)}), got {len(column)}"
                )
        if "".join(tokens) != text:
            check.fail(
                f"{where}.logprobs.tokens",
                f"must join (whitespace included) to the choice text {text[:80]!r}, got {''.join(tokens)[:80]!r}",
            )
        offsets = [
            check.integer(o, f"{where}.logprobs.text_offset[{k}]", minimum=0)
            for k, o in enumerate(columns["text_offset"])
        ]
        expected = [offsets[0] + len("".join(tokens[:k])) for k in range(len(tokens))] if offsets else []
        if offsets != expected:
            check.fail(
                f"{where}.logprobs.text_offset",
                f"must be where each token starts in the text, {expected[:8]}..., got {offsets[:8]}...",
            )
        if echo:
            _check_echo(check, where, choice, tokens, columns, prompts[i] if i < len(prompts) else None, max_tokens)
    usage = check.usage(data.get("usage"))
    if max_tokens == 0 and usage["completion_tokens"] != 0:
        check.fail("usage.completion_tokens", f"must be 0 with max_tokens 0, got {usage['completion_tokens']}")
    return data


def _check_echo(
    check: Checker,
    where: str,
    choice: dict[str, Any],
    tokens: list[str],
    columns: dict[str, list[Any]],
    prompt: str | list[int] | None,
    max_tokens: int | None,
) -> None:
    """The echoed prompt: one token per id, null first entries, log-probabilities <= 0 after them."""
    if columns["token_logprobs"][0] is not None:
        check.fail(
            f"{where}.logprobs.token_logprobs[0]",
            f"must be null (the first token has no context), got {columns['token_logprobs'][0]!r}",
        )
    if columns["top_logprobs"][0] is not None:
        check.fail(
            f"{where}.logprobs.top_logprobs[0]",
            f"must be null (the first token has no context), got {columns['top_logprobs'][0]!r}",
        )
    for k in range(1, len(tokens)):
        check.number(columns["token_logprobs"][k], f"{where}.logprobs.token_logprobs[{k}]", maximum=0.0)
        top = check.obj(columns["top_logprobs"][k], f"{where}.logprobs.top_logprobs[{k}]")
        for alt, value in top.items():
            check.number(value, f"{where}.logprobs.top_logprobs[{k}][{alt!r}]", maximum=0.0)
    if isinstance(prompt, list) and max_tokens == 0 and len(tokens) != len(prompt):
        check.fail(
            f"{where}.logprobs.tokens", f"must echo one token per prompt token id ({len(prompt)}), got {len(tokens)}"
        )
    if isinstance(prompt, list) and len(tokens) < len(prompt):
        check.fail(
            f"{where}.logprobs.tokens",
            f"must echo at least one token per prompt token id ({len(prompt)}), got {len(tokens)}",
        )
    if isinstance(prompt, str) and not choice["text"].startswith(prompt):
        check.fail(f"{where}.text", "must start with the prompt when echo is true")
    if isinstance(prompt, str) and max_tokens == 0 and choice["text"] != prompt:
        check.fail(f"{where}.text", "must be the prompt alone with echo and max_tokens 0")
