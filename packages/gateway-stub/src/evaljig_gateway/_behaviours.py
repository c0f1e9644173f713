"""What the gateway does for a model name — the one place the behaviour table lives.

A test picks a behaviour by naming the model, so no configuration travels with a request:
``openai/fail-once-gpt`` fails its first call, ``openai/gpt`` always succeeds. Tokens are
matched case-insensitively anywhere in the name and may be combined
(``fail-2-rate-limit`` answers 429 twice, then succeeds).

Three kinds of behaviour, applied in three places: the content ones (``reasoning``, ``think-empty``,
``length``, ``bad-tool-args``, ``unknown-tool``, ``context-<n>``) by each endpoint's handler, which
knows its reply's shape; the status ones (failures, ``rate-limit``, ``tpm-<n>``, ``stall``...) by
the app around the handler; the transport ones (``cut-<n>``, ``drop-<n>``, ``garble-<n>``) on the
reply's bytes as they are sent (``_faults``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

#: (token, behaviour) rows, printed by ``evaljig-gateway behaviours``; the docs copy them (a test compares).
BEHAVIOUR_TABLE: tuple[tuple[str, str], ...] = (
    ("(anything else)", "succeeds with deterministic content"),
    ("fail-once", "first call per model name answers 500, later calls succeed"),
    ("fail-<N>", "first N calls answer 500 (fail-3: three failures, then success)"),
    ("always-fail", "every call answers 500"),
    (
        "rate-limit",
        "429 with Retry-After, retry-after-ms and x-ratelimit-* headers; every call, "
        "or only the first N when combined with fail-once / fail-<N>",
    ),
    ("slow-<ms>", "waits <ms> milliseconds before answering (slow-250)"),
    ("stall", "never answers: holds the request until the client gives up"),
    ("malformed", "200 with a truncated, unparsable JSON body"),
    ("bad-request", "400 invalid_request_error on every call"),
    (
        "reasoning",
        "reasoning before the answer: chat message.reasoning_content and .reasoning (streamed first), a Responses "
        "reasoning item with a summary; usage counts reasoning_tokens (legacy completions: text unchanged)",
    ),
    (
        "think-empty",
        'all reasoning, no answer: chat content "" (not null), Responses output_text "", completions text ""',
    ),
    (
        "length",
        "the answer cut to half its tokens with finish_reason length (Responses: status incomplete, "
        "incomplete_details.reason max_output_tokens)",
    ),
    (
        "cut-<n>",
        "a stream ends cleanly after n chunks, never sending its last ([DONE], response.completed); "
        "not streamed: the body's first n bytes; journaled cut",
    ),
    (
        "drop-<n>",
        "the connection is closed after n chunks (not streamed: n bytes of the body), mid-body: "
        "the client sees an incomplete read; journaled cut",
    ),
    (
        "garble-<n>",
        "stream chunk n is not JSON (data: {garbage); not streamed: the body's first n bytes, then {garbage",
    ),
    ("context-<n>", "a prompt over n tokens answers OpenAI's 400 context_length_exceeded (context-4096)"),
    (
        "tpm-<n>",
        "429 rate_limit_exceeded with x-ratelimit-*-tokens, retry-after and retry-after-ms once n tokens "
        "(prompt + completion) are spent; the window ends only on reset or POST /_gateway/advance",
    ),
    ("bad-tool-args", "a tool call's arguments are a string that is not JSON"),
    ("unknown-tool", "a tool call names a tool that was not offered (evaljig_unknown_tool)"),
)

#: Every behaviour token as a whole word, with a separator on either side (``base_model`` removes them).
_TOKEN = re.compile(
    r"([-_.]?)(?<![a-z0-9])(?:fail-once|fail-\d+|always-fail|rate-limit|slow-\d+|stall|malformed|bad-request"
    r"|reasoning|think-empty|length|cut-\d+|drop-\d+|garble-\d+|context-\d+|tpm-\d+|bad-tool-args|unknown-tool)"
    r"(?![a-z0-9])([-_.]?)",
    re.IGNORECASE,
)
_WORDS = ("reasoning", "think-empty", "length", "bad-tool-args", "unknown-tool")
_WORD = {word: re.compile(rf"(?<![a-z0-9]){word}(?![a-z0-9])") for word in _WORDS}
_NUMBERED = {
    word: re.compile(rf"(?<![a-z0-9]){word}-(\d+)(?![a-z0-9])")
    for word in ("fail", "slow", "cut", "drop", "garble", "context", "tpm")
}

ALWAYS = -1


@dataclass(frozen=True, slots=True)
class Behaviour:
    """The parsed behaviour of one model name."""

    fail_first: int = 0
    """How many leading calls fail; ``ALWAYS`` for every call, 0 for none."""
    failure_status: int = 500
    delay_ms: int = 0
    stall: bool = False
    malformed: bool = False
    bad_request: bool = False
    reasoning: bool = False
    """Reasoning before the answer (``reasoning``)."""
    think_empty: bool = False
    """Reasoning and no answer (``think-empty``)."""
    length: bool = False
    """The answer cut short with ``finish_reason: "length"``."""
    cut_after: int | None = None
    """``cut-<n>``: the reply ends cleanly after N chunks (bytes when not streamed)."""
    drop_after: int | None = None
    """``drop-<n>``: the connection is closed after N chunks (bytes when not streamed)."""
    garble_at: int | None = None
    """``garble-<n>``: chunk N (1-based) is not JSON; not streamed, the body is garbage from byte N on."""
    context_tokens: int | None = None
    """``context-<n>``: prompts over N tokens answer 400 ``context_length_exceeded``."""
    tokens_per_window: int | None = None
    """``tpm-<n>``: 429 once N tokens are spent in the current window."""
    bad_tool_args: bool = False
    unknown_tool: bool = False

    @property
    def reshapes_stream(self) -> bool:
        """Whether the reply's bytes are cut, dropped or garbled on the way out."""
        return self.cut_after is not None or self.drop_after is not None or self.garble_at is not None

    def failure_status_for(self, attempt: int) -> int | None:
        """The error status for the ``attempt``-th call (1-based), or None to succeed.

        Attempt 0 is a call that was not counted (it arrived before a reset and finished after it):
        only a model that fails every call fails it, so a plain model's answer never depends on a reset.
        """
        if self.fail_first == ALWAYS or 1 <= attempt <= self.fail_first:
            return self.failure_status
        return None


@lru_cache(maxsize=4096)
def behaviour_for(model: str) -> Behaviour:
    """Parse a model name into its behaviour (cached: this sits on the hot path)."""
    name = model.lower()
    numbers = {word: int(m.group(1)) if (m := rx.search(name)) else None for word, rx in _NUMBERED.items()}
    rate_limited = "rate-limit" in name
    if "always-fail" in name:
        fail_first = ALWAYS
    elif "fail-once" in name:
        fail_first = 1
    else:  # rate-limit alone (or with fail-0) limits every call
        fail_first = numbers["fail"] or (ALWAYS if rate_limited else 0)
    behaviour = Behaviour(
        fail_first=fail_first,
        failure_status=429 if rate_limited else 500,
        delay_ms=numbers["slow"] or 0,
        stall="stall" in name,
        malformed="malformed" in name,
        bad_request="bad-request" in name,
        reasoning=bool(_WORD["reasoning"].search(name)),
        think_empty=bool(_WORD["think-empty"].search(name)),
        length=bool(_WORD["length"].search(name)),
        cut_after=numbers["cut"],
        drop_after=numbers["drop"],
        garble_at=numbers["garble"],
        context_tokens=numbers["context"],
        tokens_per_window=numbers["tpm"],
        bad_tool_args=bool(_WORD["bad-tool-args"].search(name)),
        unknown_tool=bool(_WORD["unknown-tool"].search(name)),
    )
    return PLAIN if behaviour == PLAIN else behaviour


#: What a name without behaviour tokens does: nothing (``behaviour_for`` gives every such name this one object).
PLAIN = Behaviour()


@lru_cache(maxsize=4096)
def base_model(model: str) -> str:
    """``model`` without its behaviour tokens: the name a recorded answer is filed under.

    ``fail-once-gpt-4o-mini`` and ``gpt-4o-mini-slow-50`` are ``gpt-4o-mini``, so a replaying gateway
    answers them with ``gpt-4o-mini``'s recording, wrapped in their behaviour.
    """
    base, removed = _TOKEN.subn(_keep_one_separator, model)
    # two tokens in a row at the end leave the first one's separator (``gpt-stall-slow-5``: ``gpt-``)
    return base.rstrip("-_.") if removed else base


def _keep_one_separator(match: re.Match[str]) -> str:
    """A token between two separators leaves one (``a-stall-b``: ``a-b``); at either end, none."""
    before, after = match.group(1), match.group(2)
    return before if before and after else ""


def behaviour_table_markdown() -> str:
    """The behaviour table as Markdown (for ``evaljig-gateway behaviours`` and docs)."""
    lines = ["| model name contains | behaviour |", "|---|---|"]
    lines += [f"| `{token}` | {text} |" for token, text in BEHAVIOUR_TABLE]
    return "\n".join(lines) + "\n"
