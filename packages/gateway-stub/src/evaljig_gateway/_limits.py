"""Per-request limits: how much a single request may make the gateway read or compute.

One request must never cost the other clients more than a few milliseconds, so the work a
body asks for (vectors, choices, tokens) is bounded before any of it is done, and an
oversized request is answered 400 naming the parameter. Work whose size is only known while it
is done (a schema instance, a string for a ``pattern``) spends an :class:`OutputBudget` as it
goes and stops at it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

from evaljig_gateway._errors import GatewayError, invalid
from evaljig_gateway._tokenizer import count as count_tokens


@dataclass(frozen=True, slots=True)
class Limits:
    """Request limits; every one has a ``serve`` flag of the same name (``--max-embedding-values``).

    Each default is sized to what an eval sends, with room to spare, and no further: the gateway
    is a test double, and a request past a limit is answered 400 naming the parameter (413/431 for
    the transport ones) before any of its work is done. Raise one with its flag when a real suite needs more.
    """

    max_body_bytes: int = 4 * 1024 * 1024
    """Larger bodies are answered 413 before or while they are read.

    A long MMLU/GPQA chat prompt is a few KiB; a 128k-token context is about 0.5 MiB of text; 4 MiB
    leaves room for batched token-id prompts and a long agent conversation."""
    max_header_count: int = 100
    """More request headers than this are answered 431 (SDKs send ~15)."""
    max_header_bytes: int = 16 * 1024
    """Request path plus header names and values above this are answered 431 (SDKs send under 2 KiB)."""
    max_embedding_values: int = 1024 * 1024
    """Embeddings: inputs x dimensions (floats generated) per request.

    MTEB-style evals embed batches of 32-512 texts at 384-3072 dimensions (at most about 1.5M for
    512 x 3072; 1M is 682 inputs of 1536 dimensions)."""
    max_choices: int = 4096
    """Completions: prompts x ``n`` (choices generated) per request; chat's ``n`` is at most 128.

    lm-eval's ``local-completions`` sends one prompt per choice of a batch (a 64-question batch of
    4-choice tasks is 256); pass@k generation asks ``n`` up to 200."""
    max_output_tokens: int = 128 * 1024
    """Chat and completions: ``n`` x ``max_tokens`` (the tokens a request may ask for).

    Generative evals ask ``max_tokens`` up to 32k (lighteval multiplies a reasoning model's by 10:
    2048 x 10 = 20,480), with ``n`` of 1-4: 128k tokens covers ``n`` = 4 at 32k."""
    max_echo_tokens: int = 64 * 1024
    """Completions with ``echo``: prompt tokens x ``n``, times ``logprobs`` (at least 1) when it is set.

    Loglikelihood evals echo each choice with its context (a long MMLU prompt is 2-4k tokens) with
    ``logprobs`` 1 and ``n`` 1; lm-eval batches a few of them per request: 64k tokens is 16 such
    prompts. Each echoed token is copied into every choice and scored with ``logprobs`` alternatives
    (about 8 us and 150 bytes each), so this bounds the time (about half a second, in a worker
    thread) and memory (about 10 MiB) such a request may cost."""
    max_model_chars: int = 256
    """The length of the ``model`` name; per-model attempt counters and the journal keep the name."""
    max_generated_chars: int = 32 * 1024
    """Characters of generated JSON per request: schema instances (``response_format``, ``text.format``),
    tool-call arguments and the strings drawn for ``pattern``, all choices and calls together.

    A structured-output or tool-calling eval's answer is a few hundred characters to a few KiB
    (an extraction schema with lists of items); 32 KiB is about 8k tokens. ``minLength``,
    ``minItems`` or ``minProperties`` asking for more, or nested repeats (``(a{3000}){3000}``),
    are a 400 naming the schema path, refused as the characters are counted, never after."""
    max_generation_steps: int = 25_000
    """Steps the schema-instance and pattern generators, and the final ``jsonschema`` check, may take
    per request; a step is a few microseconds of work (a value generated costs 5, a regex node 2, a
    pattern character parsed 1, a validation keyword 5, a ``$ref`` followed 10), so this is about
    50-100 ms at most.

    The schemas evals send (pydantic models of a few dozen fields, nested a few levels) take a
    few hundred steps; a schema that needs more is a 400 saying so."""
    max_tools: int = 128
    """Tools (``tools``, ``functions``) a request may declare: OpenAI's own limit is 128."""
    max_prompt_chars: int = 1024 * 1024
    """Characters of prompt text per request (chat ``messages``, completions ``prompt``, ``input``),
    refused before any of it is tokenised.

    The longest eval prompts (long-context tasks at a 128k-token window) are about 0.5M characters;
    1M leaves room for that twice. Tokenising costs 0.2-1.7 us a character (the worst is a hostile
    ``a1a1...`` run, every character its own token), so this bounds one request's tokenising to under
    two seconds of a worker thread; without it a 4 MiB body would be about 7 s of CPU."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"limit {f.name} must be a positive integer, got {value!r}")


_DEFAULT_LIMITS = Limits()


class BudgetExceededError(ValueError):
    """A generator needed more than its request's :class:`OutputBudget` holds; the message says which part."""


class OutputBudget:
    """What one request's generators may still spend: characters of output and steps of work.

    Spent as the work happens (a character when it is emitted, a step when a node is visited), so
    a schema or pattern that asks for too much is stopped at the budget, never after doing it all.
    """

    __slots__ = ("chars_left", "max_chars", "max_steps", "steps_left")

    def __init__(self, max_chars: int, max_steps: int) -> None:
        self.max_chars, self.max_steps = max_chars, max_steps
        self.chars_left, self.steps_left = max_chars, max_steps

    @classmethod
    def of(cls, limits: Limits | None = None) -> OutputBudget:
        """A fresh budget at ``limits`` (the default :class:`Limits` when None)."""
        limits = limits if limits is not None else _DEFAULT_LIMITS
        return cls(limits.max_generated_chars, limits.max_generation_steps)

    def spend_chars(self, count: int) -> None:
        self.chars_left -= count
        if self.chars_left < 0:
            raise BudgetExceededError(
                f"the answer needs more than the {self.max_chars:,} characters this gateway generates per request "
                "(evaljig-gateway serve --max-generated-chars)"
            )

    def spend_steps(self, count: int) -> None:
        self.steps_left -= count
        if self.steps_left < 0:
            raise BudgetExceededError(
                f"the schema needs more than the {self.max_steps:,} steps of work this gateway spends per request "
                "(evaljig-gateway serve --max-generation-steps)"
            )


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


def check_echo(limits: Limits, prompts: Sequence[str | int], n: int, logprobs: int | None) -> None:
    """400 naming ``echo`` when echoing ``prompts`` would cost more than ``limits.max_echo_tokens``: echoed prompt
    tokens (the gateway's own count, as ``usage.prompt_tokens`` reports) x ``n`` x ``max(logprobs, 1)`` (x 1
    without ``logprobs``), a copy per choice, each scored with ``logprobs`` alternatives. A prompt is its text, or
    its token count when that is known (token ids: one echoed token per id).

    Run before any choice is made. Prompts too short to be over the limit whatever they hold (a
    token is at least one character) are not tokenized at all, and counting stops as soon as the
    limit is passed, so a hostile prompt is never counted in full.
    """
    per_token = n * (max(logprobs, 1) if logprobs is not None else 1)
    allowed = limits.max_echo_tokens // per_token  # tokens x per_token <= the limit exactly when tokens <= this
    if sum(p if isinstance(p, int) else len(p) for p in prompts) <= allowed:
        return
    tokens = 0
    for prompt in prompts:
        tokens += prompt if isinstance(prompt, int) else count_tokens(prompt, allowed - tokens)
        if tokens > allowed:  # over: counting stopped, so ``tokens`` is a lower bound
            break
    if logprobs is None:  # (not over: the check below passes)
        what = f"echoed prompt tokens x n (at least {tokens:,} x {n})"
    else:
        what = f"echoed prompt tokens x n x logprobs (at least {tokens:,} x {n} x {max(logprobs, 1)})"
    check_product("echo", what, tokens * per_token, limits.max_echo_tokens, "--max-echo-tokens")


def check_model_name(model: str, limits: Limits) -> None:
    """400 naming ``model`` when the name is longer than ``limits.max_model_chars``.

    Every distinct name is kept (attempt counters, journal, behaviour cache), so its length is bounded.
    """
    if len(model) > limits.max_model_chars:
        raise invalid(
            "model",
            f"a name of {len(model):,} characters exceeds this gateway's limit of "
            f"{limits.max_model_chars:,} (evaljig-gateway serve --max-model-chars).",
        )
