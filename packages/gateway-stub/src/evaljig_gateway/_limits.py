"""Per-request limits: how much a single request may make the gateway read or compute.

One request must never cost the other clients more than a few milliseconds, so the work a
body asks for (vectors, choices, tokens) is bounded before any of it is done, and an
oversized request is answered 400 naming the parameter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

from evaljig_gateway._content import count_tokens_work
from evaljig_gateway._errors import GatewayError
from evaljig_gateway._work import Work

#: A completions ``prompt`` as the cost functions take it: text, texts, token ids, or lists of token ids.
Prompts = str | Sequence[str] | Sequence[int] | Sequence[Sequence[int]]


@dataclass(frozen=True, slots=True)
class Limits:
    """Request limits; every one has a ``serve`` flag of the same name (``--max-embedding-values``)."""

    max_body_bytes: int = 4 * 1024 * 1024
    """Larger bodies are answered 413 before or while they are read."""
    max_header_count: int = 100
    """More request headers than this are answered 431 while the headers are parsed."""
    max_header_bytes: int = 16 * 1024
    """Request line plus header names and values above this are answered 431."""
    max_embedding_values: int = 1024 * 1024
    """Embeddings: inputs x dimensions (floats generated) per request."""
    max_choices: int = 4096
    """Completions: prompts x ``n`` (choices generated) per request; chat's ``n`` is at most 128."""
    max_output_tokens: int = 1024 * 1024
    """Chat and completions: ``n`` x ``max_tokens`` (the tokens a request may ask for)."""
    max_echo_tokens: int = 256 * 1024
    """Completions with ``echo``: prompt tokens x ``n``, times ``logprobs`` (at least 1) when it is set.

    Each echoed token is copied into every choice and, with ``logprobs``, scored with that many
    alternatives (about 8 us and 150 bytes each), so this bounds the time (about 2 s) and memory
    (tens of MiB) such a request may cost, as ``max_embedding_values`` does for embeddings."""
    max_model_chars: int = 256
    """The length of the ``model`` name; per-model attempt counters and the journal keep the name."""
    max_header_wait_ms: int = 10_000
    """How long a request line and headers may take to arrive; slower ones are answered 408 and closed."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"limit {f.name} must be a positive integer, got {value!r}")


def check_product(param: str, what: str, product: int, limit: int, flag: str) -> None:
    """400 naming ``param`` when ``product`` (described by ``what``) exceeds ``limit``."""
    if product > limit:
        raise GatewayError(
            400,
            f"Invalid value for '{param}': {what} = {product:,} exceeds this gateway's limit of {limit:,} "
            f"per request (evaljig-gateway serve {flag}).",
            param=param,
            code="request_too_large",
        )


def echo_cost_work(prompts: Prompts, n: int, logprobs: int | None) -> Work[int]:
    """Echoed prompt tokens x ``n`` x ``max(logprobs, 1)`` (x 1 without ``logprobs``), counted step-wise.

    Text is counted with the gateway's own tokenizer (``_content.count_tokens_work``, the count
    ``usage.prompt_tokens`` reports), a token-id list by its length.
    """
    tokens, _ = yield from _echoed_tokens_work(prompts, None)
    return tokens * _per_token(n, logprobs)


def check_echo_work(limits: Limits, prompts: Prompts, n: int, logprobs: int | None) -> Work[None]:
    """400 naming ``echo`` when echoing ``prompts`` would cost more than ``limits.max_echo_tokens``.

    Run before any choice is made. Prompts too short to be over the limit whatever they hold (a
    token is at least one character) are not tokenized at all, and counting stops as soon as the
    limit is passed, so a hostile prompt is never counted in full.
    """
    limit, per_token = limits.max_echo_tokens, _per_token(n, logprobs)
    if sum(len(p) for p in _prompt_list(prompts)) * per_token <= limit:
        return
    tokens, complete = yield from _echoed_tokens_work(prompts, limit // per_token)
    shown = f"{tokens:,}" if complete else f"at least {tokens:,}"
    if logprobs is None:
        what = f"echoed prompt tokens x n ({shown} x {n})"
    else:
        what = f"echoed prompt tokens x n x logprobs ({shown} x {n} x {max(logprobs, 1)})"
    check_product("echo", what, tokens * per_token, limit, "--max-echo-tokens")


def _per_token(n: int, logprobs: int | None) -> int:
    """What one echoed token costs: a copy per choice, each scored with ``logprobs`` alternatives (at least 1)."""
    return n * (max(logprobs, 1) if logprobs is not None else 1)


def _echoed_tokens_work(prompts: Prompts, stop_above: int | None) -> Work[tuple[int, bool]]:
    """(tokens, True) for all of ``prompts``, or (more than ``stop_above``, False) as soon as that is known."""
    tokens = 0
    for prompt in _prompt_list(prompts):
        left = None if stop_above is None else stop_above - tokens
        tokens += (yield from count_tokens_work(prompt, left)) if isinstance(prompt, str) else len(prompt)
        if stop_above is not None and tokens > stop_above:
            return tokens, False
    return tokens, True


def check_model_name(model: str, limits: Limits) -> None:
    """400 naming ``model`` when the name is longer than ``limits.max_model_chars``.

    Every distinct name is kept (attempt counters, journal, behaviour cache), so its length is bounded.
    """
    if len(model) > limits.max_model_chars:
        raise GatewayError(
            400,
            f"Invalid value for 'model': a name of {len(model):,} characters exceeds this gateway's limit of "
            f"{limits.max_model_chars:,} (evaljig-gateway serve --max-model-chars).",
            param="model",
            code="invalid_value",
        )


def _prompt_list(prompts: Prompts) -> list[str | Sequence[int]]:
    """One entry per prompt: a string, a list of strings, token ids, or a list of token-id lists."""
    if isinstance(prompts, str):
        return [prompts]
    items = list(prompts)
    if items and all(isinstance(p, int) for p in items):
        return [items]  # type: ignore[list-item]
    return items  # type: ignore[return-value]
