"""The OpenAI endpoints: deterministic bodies for chat, completions, embeddings, models, responses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from evaljig_common import SYSTEM_FINGERPRINT
from evaljig_gateway import (
    _assistant,
    _completions,
    _content,
    _logprobs,
    _responses,
    _structured,
    _tool_choice,
    _validation,
)
from evaljig_gateway._behaviours import BEHAVIOUR_TABLE
from evaljig_gateway._errors import invalid, missing
from evaljig_gateway._limits import Limits, OutputBudget, check_product
from evaljig_gateway._replies import ArrayBody, Reply, json_reply, sse_reply_work
from evaljig_gateway._work import Work

DEFAULT_EMBEDDING_DIMENSIONS = 1536
MAX_EMBEDDING_DIMENSIONS = 8192
MODELS_OWNER = "evaljig"
#: Example names listed by ``GET /v1/models``; any other name works too.
LISTED_MODELS = ("gpt-stub", "fail-once", "always-fail", "rate-limit", "slow-100", "malformed")


@dataclass(slots=True)
class Request:
    """A parsed, validated-as-object request body with its bytes and model."""

    raw: bytes
    body: dict[str, Any]
    model: str
    answers: _content.AnswerKey
    limits: Limits

    @property
    def digest(self) -> str:
        return _content.digest(self.raw)


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    return _completions.usage_of(prompt_tokens, completion_tokens)


def _answer(known: str | None, prompt: str, index: int) -> str:
    """The answer key's answer (looked up once per prompt) or the prompt-derived one for choice ``index``."""
    return known if known is not None else _content.default_answer(prompt, index)


def _check_tokens(req: Request, n: int, max_tokens: int | None, param: str) -> None:
    if max_tokens is not None:
        what = f"n x {param} ({n} x {max_tokens})"
        check_product(param, what, n * max_tokens, req.limits.max_output_tokens, "--max-output-tokens")


# --------------------------------------------------------------------------- chat


def chat_completions(req: Request) -> Work[Reply]:
    body = req.body
    messages = _validation.messages_of(body)
    _validation.sampling(body)
    n = _validation.optional_int(body, "n", 1, 128) or 1
    tokens_param = "max_completion_tokens"
    max_tokens = _validation.optional_int(body, tokens_param, 1, 1_000_000)
    if max_tokens is None:
        tokens_param = "max_tokens"
        max_tokens = _validation.optional_int(body, tokens_param, 1, 1_000_000)
    _check_tokens(req, n, max_tokens, tokens_param)
    stop = _validation.stop_list(body)
    stream = _validation.optional_bool(body, "stream")
    want_logprobs = _validation.optional_bool(body, "logprobs")
    top = _validation.optional_int(body, "top_logprobs", 0, 20)
    if top is not None and not want_logprobs:
        raise invalid("top_logprobs", "requires 'logprobs' to be true")
    policy = _tool_choice.tool_choice_of(body, req.limits.max_tools)
    json_format = _structured.response_format_of(body)
    if json_format is not None and json_format.schema is None:  # json_object: a schema the prompt asks for
        json_format = _structured.JsonFormat(prompted=_structured.prompted_schema(messages, _content.message_text))
    options = body.get("stream_options")
    if options is not None and (not isinstance(options, dict) or not stream):
        raise invalid("stream_options", "is only allowed with 'stream': true and must be an object")
    include_usage = bool(options and options.get("include_usage"))

    prompt = "\n".join(_content.message_text(m.get("content")) for m in messages)
    prompt_tokens = yield from _content.count_tokens_work(prompt)
    known = req.answers.lookup(prompt)
    turn = req.answers.turn_for(messages)  # a scripted turn overrides tool choice and format
    to_call = _tool_choice.calls_for(policy, messages) if turn is None else []
    seed = _assistant.conversation_seed(messages) if to_call or json_format else ""  # only what needs it pays
    digest = req.digest
    head = {
        "id": f"chatcmpl-{digest[:24]}",
        "object": "chat.completion",
        "created": _content.created_from(digest),
        "model": req.model,
        "system_fingerprint": SYSTEM_FINGERPRINT,
    }
    # a plain answer writes each choice as soon as it is made (log-probs in steps)
    written = None if stream else ArrayBody(head, "choices")
    choices: list[dict[str, Any]] = []
    completion_tokens = 0
    budget = OutputBudget.of(req.limits)  # generated JSON (instances, tool arguments): all choices share it
    for index in range(n):
        yield
        if written is not None and choices:  # the choice before: written now, its objects can go
            yield from written.add_work(choices.pop())
        calls = _assistant.scripted_calls(turn) if turn else _assistant.generated_calls(to_call, seed, index, budget)
        if calls:
            message, finish = _assistant.call_message(calls, digest, index, legacy=policy.legacy)
            completion_tokens += sum(_content.count_tokens(c.payload) for c in calls)
            choices.append({"index": index, "message": message, "logprobs": None, "finish_reason": finish})
            continue
        if turn is not None and turn.content is not None:
            raw = turn.content
        elif json_format is not None:
            answer = _content.default_answer(prompt, index)
            raw = _structured.json_content(json_format, known, answer, f"{seed}\x00{index}", budget=budget)
        else:
            raw = _answer(known, prompt, index)
        text, finish = _content.truncate(raw, max_tokens, stop)
        completion_tokens += _content.count_tokens(text)
        logprobs = None
        if want_logprobs:
            keyed = _logprobs.KeyedText(prompt, req.answers.items()) if len(req.answers) else None
            content = yield from _logprobs.chat_logprobs_work(prompt, _content.pieces(text), top or 0, keyed)
            logprobs = {"content": content, "refusal": None}
        message = {"role": "assistant", "content": text, "refusal": None, "annotations": []}
        choices.append({"index": index, "message": message, "logprobs": logprobs, "finish_reason": finish})

    usage = _usage(prompt_tokens, completion_tokens)
    if written is not None:
        for choice in choices:  # the last one (the others were written as the next was made)
            if want_logprobs:  # only log-probs make a choice long enough to be written in steps
                yield from written.add_work(choice)
            else:
                written.add(orjson.dumps(choice))
        return written.reply({"usage": usage, "service_tier": "default"})
    events = yield from _chat_chunks(head, choices, usage if include_usage else None)
    return (yield from sse_reply_work(events))


def _chat_chunks(
    head: dict[str, Any], choices: list[dict[str, Any]], usage: dict[str, Any] | None
) -> Work[list[dict[str, Any]]]:
    """OpenAI's chunk sequence: role, one delta per token, finish, then usage if asked."""
    chunk_head = {**head, "object": "chat.completion.chunk"}
    extra = {"usage": None} if usage is not None else {}
    events: list[dict[str, Any]] = []
    for choice in choices:
        yield
        index, message = choice["index"], choice["message"]
        deltas: list[tuple[dict[str, Any], Any]] = [({"role": "assistant", "content": ""}, None)]
        if message.get("tool_calls") or message.get("function_call"):
            deltas.extend((delta, None) for delta in _assistant.call_deltas(message))
        else:
            logprobs = (choice["logprobs"] or {}).get("content")
            for i, piece in enumerate(_content.pieces(message["content"])):
                lp = {"content": [logprobs[i]], "refusal": None} if logprobs and i < len(logprobs) else None
                deltas.append(({"content": piece}, lp))
        for delta, lp in deltas:
            events.append(
                {
                    **chunk_head,
                    "choices": [{"index": index, "delta": delta, "logprobs": lp, "finish_reason": None}],
                    **extra,
                }
            )
        events.append(
            {
                **chunk_head,
                "choices": [{"index": index, "delta": {}, "logprobs": None, "finish_reason": choice["finish_reason"]}],
                **extra,
            }
        )
    if usage is not None:
        events.append({**chunk_head, "choices": [], "usage": usage})
    return events


# --------------------------------------------------------------------------- completions


def completions(req: Request) -> Work[Reply]:
    """Legacy text completions, with token-id prompts and loglikelihood scoring: see ``_completions``."""
    return _completions.completions(req)


# --------------------------------------------------------------------------- embeddings


def embeddings(req: Request) -> Work[Reply]:
    body = req.body
    raw_input = body.get("input")
    if raw_input is None:
        raise missing("input")
    dims = _validation.optional_int(body, "dimensions", 1, MAX_EMBEDDING_DIMENSIONS) or DEFAULT_EMBEDDING_DIMENSIONS
    count = _embedding_count(raw_input)  # the limit first: a refused request costs no per-item work
    what = f"inputs x dimensions ({count} x {dims})"
    check_product("input", what, count * dims, req.limits.max_embedding_values, "--max-embedding-values")
    items = _embedding_items(raw_input)
    fmt = body.get("encoding_format", "float")
    if fmt not in ("float", "base64"):
        raise invalid("encoding_format", "must be 'float' or 'base64'")
    data = ArrayBody({"object": "list"}, "data")  # serialized one by one, so no single dump holds the loop
    tokens = 0
    for index, item in enumerate(items):
        vector = yield from _content.embedding_work(req.model, item, dims)
        tokens += (yield from _content.count_tokens_work(item)) if isinstance(item, str) else len(item)
        value: Any = _content.encode_base64_floats(vector) if fmt == "base64" else vector
        data.add(orjson.dumps({"object": "embedding", "index": index, "embedding": value}))
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    return data.reply({"model": req.model, "usage": usage})


def _embedding_count(raw: Any) -> int:
    """How many embeddings ``raw`` asks for, read without looking at every item (1 for one token array)."""
    if isinstance(raw, list) and raw and not (isinstance(raw[0], int) and not isinstance(raw[0], bool)):
        return len(raw)
    return 1


def _embedding_items(raw: Any) -> list[Any]:
    if isinstance(raw, str):
        items: list[Any] = [raw]
    elif isinstance(raw, list) and raw and all(isinstance(x, int) and not isinstance(x, bool) for x in raw):
        items = [raw]
    elif isinstance(raw, list) and raw and all(isinstance(x, (str, list)) for x in raw):
        items = list(raw)
    else:
        raise invalid("input", "must be a string, an array of strings, or an array of token arrays")
    for i, item in enumerate(items):
        if isinstance(item, str) and not item:
            raise invalid(f"input[{i}]", "must not be empty")
        if isinstance(item, list) and not (item and all(isinstance(t, int) for t in item)):
            raise invalid(f"input[{i}]", "token arrays must be non-empty arrays of integers")
    return items


# --------------------------------------------------------------------------- models


def _model_object(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": _content.CREATED_BASE, "owned_by": MODELS_OWNER}


def list_models() -> Reply:
    return json_reply({"object": "list", "data": [_model_object(m) for m in LISTED_MODELS]})


def retrieve_model(name: str) -> Reply:
    """Every name exists: the name *is* the behaviour (see ``_behaviours``)."""
    return json_reply(_model_object(name))


def behaviours() -> Reply:
    return json_reply([{"token": t, "behaviour": b} for t, b in BEHAVIOUR_TABLE])


# --------------------------------------------------------------------------- responses


def responses(req: Request) -> Work[Reply]:
    """The Responses API with tools, ``text.format`` and streaming: see ``_responses``."""
    return _responses.responses(req)
