"""``POST /v1/completions``: the legacy text completions API, able to score loglikelihood.

A prompt is a string, an array of strings, an array of token ids or an array of token-id arrays
(``_token_ids`` reads them as GPT-2 ids). With ``echo`` the choice repeats the prompt, one token
per id sent (or per word for text), then the completion; the completion starts on a clean token
boundary (a space before it when the prompt ends inside a word), so nothing is glued onto the
prompt's last word. ``logprobs`` scores every token with ``_logprobs``: a pure function of the
text before it, so an echoed token and a generated one get the same value, and the first token
of an echoed prompt gets null. ``max_tokens: 0`` with ``echo`` scores the prompt alone.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from evaljig_gateway import _content, _logprobs, _shaping, _token_ids, _tokenizer, _validation
from evaljig_gateway._behaviours import behaviour_for
from evaljig_gateway._errors import invalid
from evaljig_gateway._limits import check_echo, check_product
from evaljig_gateway._replies import Reply, json_reply, sse_reply
from evaljig_gateway._request import Request, answer, check_prompt, check_tokens, head_of, usage_of

#: OpenAI's default ``max_tokens`` for the legacy endpoint.
DEFAULT_MAX_TOKENS = 16
_PROMPT_FORMS = "must be a string, an array of strings, an array of token ids, or an array of token-id arrays"


class Prompt(NamedTuple):
    """One prompt as text; sent as token ids, also the pieces they decode to (one per id, what an echo returns)."""

    text: str
    pieces: list[str] | None = None
    """None for a prompt sent as text: it is cut into tokens when an echo needs them."""


def prompts_of(body: dict[str, Any]) -> list[Prompt]:
    """The request's prompts; token ids are decoded, text is cut lazily."""
    raw = _validation.required(body, "prompt")
    if isinstance(raw, str):
        return [Prompt(raw)]
    if not isinstance(raw, list) or not raw:
        raise invalid("prompt", _PROMPT_FORMS)
    if all(isinstance(p, str) for p in raw):
        return [Prompt(p) for p in raw]
    if all(isinstance(t, int) and not isinstance(t, bool) for t in raw):
        return [_id_prompt(raw, "prompt")]
    if all(isinstance(p, list) for p in raw):
        return [_id_prompt(ids, f"prompt[{i}]") for i, ids in enumerate(raw)]
    raise invalid("prompt", _PROMPT_FORMS)


def _id_prompt(value: Any, param: str) -> Prompt:
    pieces = _token_ids.decode_pieces(_token_ids.check_ids(value, param))
    return Prompt("".join(pieces), pieces)


def completion_text(prompt: str, answer: str, max_tokens: int, stop: list[str]) -> tuple[str, str]:
    """The completion and its finish reason; a space first when the prompt ends inside a word.

    Real models begin a completion with the whitespace that separates it from the prompt
    (``" Paris"``), so echo + completion reads as text and tokenizes cleanly at the boundary.
    """
    if prompt and not prompt[-1].isspace() and answer and not answer[0].isspace():
        answer = " " + answer
    return _content.truncate(answer, max_tokens, stop)


#: The fields checked as numbers, integers or booleans.
_FIELDS: dict[str, _validation.Rule] = {
    **_validation.CHOICES,
    "max_tokens": ("integer", 0, 1_000_000),
    "echo": _validation.BOOLEAN,
    "logprobs": ("integer", 0, 5),
}


def handle(req: Request) -> Reply:
    """The handler: choices per prompt x ``n``, echo and log-probabilities as described above."""
    body = req.body
    prompts = prompts_of(body)
    check_prompt(req, sum(len(prompt.text) for prompt in prompts), "prompt")
    _validation.check_fields(body, _FIELDS)
    n = body.get("n") or 1
    max_tokens = DEFAULT_MAX_TOKENS if body.get("max_tokens") is None else body["max_tokens"]
    what = f"prompts x n ({len(prompts)} x {n})"
    check_product("n" if n > 1 else "prompt", what, len(prompts) * n, req.limits.max_choices, "--max-choices")
    check_tokens(req, n, max_tokens, "max_tokens")
    stop = _validation.stop_list(body)
    stream = body.get("stream") is True
    echo = body.get("echo") is True
    top = body.get("logprobs")
    if echo:  # echoed tokens x n x logprobs, refused before any choice is made or scored
        # token ids: one echoed token each, whatever their text would tokenize to
        check_echo(req.limits, [p.text if p.pieces is None else len(p.pieces) for p in prompts], n, top)

    key = req.answers.items() if top is not None and len(req.answers) else []
    head = head_of(req, req.digest, "cmpl-", "text_completion")
    choices: list[dict[str, Any]] = []
    cache: dict[tuple[str, str], float] = {}  # plain-model values, shared by prompts with a common context
    prompt_tokens = completion_tokens = reasoning_tokens = 0
    behaviour = behaviour_for(req.model)
    for p_index, prompt in enumerate(prompts):
        counted = _content.count_tokens(prompt.text) if prompt.pieces is None else len(prompt.pieces)
        _shaping.check_context(behaviour, counted, "completions", max_tokens)  # each prompt is its own sequence
        prompt_tokens += counted
        known = req.answers.lookup(prompt.text)
        keyed = _logprobs.KeyedText(prompt.text, key) if key else None
        echoed = None  # the prompt's columns: a token's value reads only the text before it, so one for every choice
        if echo and top is not None:
            pieces = _tokenizer.pieces(prompt.text) if prompt.pieces is None else prompt.pieces
            echoed = _logprobs.score_pieces(prompt.text, pieces, 0, top, keyed, cache)._asdict()
        for k in range(n):
            text, finish = completion_text(prompt.text, answer(known, prompt.text, k), max_tokens, stop)
            # no reasoning field on this endpoint: the reasoning is hidden but counted, as OpenAI bills it
            reasoning, text, finish = _shaping.shaped(behaviour, prompt.text, text, finish)
            completion_tokens += _content.count_tokens(text)
            if reasoning is not None:
                reasoning_tokens += _content.count_tokens(reasoning)
            logprobs = None
            if top is not None:
                full = prompt.text + text
                scored = _logprobs.score_pieces(full, _tokenizer.pieces(text), len(prompt.text), top, keyed, cache)
                logprobs = scored._asdict()
                if echoed is not None:  # the echoed prompt's columns, then the completion's
                    logprobs = {name: column + logprobs[name] for name, column in echoed.items()}
            full_text = prompt.text + text if echo else text
            choices.append({"text": full_text, "index": p_index * n + k, "logprobs": logprobs, "finish_reason": finish})
    usage = usage_of(prompt_tokens, completion_tokens + reasoning_tokens, reasoning_tokens)
    tokens = usage["total_tokens"]
    if not stream:
        return json_reply({**head, "choices": choices, "usage": usage}, tokens=tokens)
    options = body.get("stream_options")
    events = [{**head, "choices": [{**c, "finish_reason": None}]} for c in choices if c["text"]]
    events += [{**head, "choices": [{**c, "text": ""}]} for c in choices]
    if isinstance(options, dict) and options.get("include_usage"):
        events.append({**head, "choices": [], "usage": usage})
    return sse_reply(events, tokens=tokens)
