"""``POST /v1/chat/completions``: chat answers with tools, structured output, log-probabilities and streaming.

The answer is the answer key's or one derived from the prompt; a scripted turn (``_script``)
overrides tool choice and format; tool calls and JSON answers are generated from their schemas
(``_assistant``, ``_structured``) within the request's ``OutputBudget``.
"""

from __future__ import annotations

from typing import Any

from evaljig_gateway import _assistant, _content, _logprobs, _shaping, _structured, _tokenizer, _validation
from evaljig_gateway._behaviours import PLAIN, behaviour_for
from evaljig_gateway._errors import invalid
from evaljig_gateway._limits import OutputBudget
from evaljig_gateway._replies import Reply, json_reply, sse_reply
from evaljig_gateway._request import Request, answer, check_prompt, check_tokens, head_of, usage_of
from evaljig_gateway._tool_choice import calls_for, tool_choice_of

#: The fields checked as numbers, integers or booleans (``max_tokens`` only without ``max_completion_tokens``).
_FIELDS: dict[str, _validation.Rule] = {
    **_validation.CHOICES,
    "max_completion_tokens": ("integer", 1, 1_000_000),
    "logprobs": _validation.BOOLEAN,
    "top_logprobs": ("integer", 0, 20),
}


def handle(req: Request) -> Reply:
    """``POST /v1/chat/completions``."""
    body = req.body
    messages = _validation.messages_of(body)
    _validation.check_fields(body, _FIELDS)
    n = body.get("n") or 1
    # the legacy name counts only without the new one (checked above)
    tokens_param = "max_tokens" if body.get("max_completion_tokens") is None else "max_completion_tokens"
    max_tokens = _validation.optional(body, tokens_param, ("integer", 1, 1_000_000))
    check_tokens(req, n, max_tokens, tokens_param)
    stop = _validation.stop_list(body)
    stream = body.get("stream") is True
    want_logprobs = body.get("logprobs") is True
    top = body.get("top_logprobs")
    if top is not None and not want_logprobs:
        raise invalid("top_logprobs", "requires 'logprobs' to be true")
    policy = tool_choice_of(body, req.limits.max_tools)
    json_format = _structured.response_format_of(body)
    if json_format is not None and json_format.schema is None:  # json_object: a schema the prompt asks for
        json_format = _structured.JsonFormat(prompted=_structured.prompted_schema(messages, _content.message_text))
    options = body.get("stream_options")
    if options is not None and (not isinstance(options, dict) or not stream):
        raise invalid("stream_options", "is only allowed with 'stream': true and must be an object")
    include_usage = bool(options and options.get("include_usage"))

    prompt = "\n".join([_content.message_text(m.get("content")) for m in messages])
    check_prompt(req, len(prompt), "messages")
    prompt_tokens = _content.count_tokens(prompt)
    behaviour = behaviour_for(req.model)
    if behaviour is not PLAIN:
        _shaping.check_context(behaviour, prompt_tokens, "chat")
    known = req.answers.lookup(prompt)
    turn = req.answers.turn_for(messages)  # a scripted turn overrides tool choice and format
    to_call = calls_for(policy, messages) if turn is None else []
    generates = bool(to_call) or json_format is not None  # only what generates pays for a seed and a budget
    seed = _assistant.conversation_seed(messages) if generates else ""
    # generated JSON (instances, tool arguments): all choices share one budget
    budget = OutputBudget.of(req.limits) if generates else None
    digest = req.digest
    head = head_of(req, digest, "chatcmpl-", "chat.completion")
    choices: list[dict[str, Any]] = []
    completion_tokens = reasoning_tokens = 0
    for index in range(n):
        calls = list(turn.calls) if turn is not None else []
        if to_call and budget is not None:  # to_call: only without a scripted turn
            calls = _assistant.generated_calls(to_call, seed, index, budget)
        reasoning = None
        logprobs = None
        if calls:
            calls = _assistant.broken_calls(behaviour, calls, [tool.name for tool in policy.allowed])
            message, finish = _assistant.call_message(calls, digest, index, legacy=policy.legacy)
            completion_tokens += sum(_content.count_tokens(c.payload) for c in calls)
            reasoning = _shaping.reasoning_for(behaviour, prompt)
        else:
            if turn is not None and turn.content is not None:
                raw = turn.content
            elif json_format is not None:
                derived = _content.default_answer(prompt, index)
                assert budget is not None  # made above for every request that generates
                raw = _structured.json_content(json_format, known, derived, f"{seed}\x00{index}", budget=budget)
            else:
                raw = answer(known, prompt, index)
            text, finish = _content.truncate(raw, max_tokens, stop)
            if behaviour is not PLAIN:  # reasoning, think-empty, length
                reasoning, text, finish = _shaping.shaped(behaviour, prompt, text, finish)
            completion_tokens += _content.count_tokens(text)
            if want_logprobs:
                keyed = _logprobs.KeyedText(prompt, req.answers.items()) if len(req.answers) else None
                content = _logprobs.chat_logprobs(prompt, _tokenizer.pieces(text), top or 0, keyed)
                logprobs = {"content": content, "refusal": None}
            message = {"role": "assistant", "content": text, "refusal": None, "annotations": []}
        if reasoning is not None:  # in both fields servers use, after the content: ``reasoning_content`` (DeepSeek,
            # vLLM before 0.10, what litellm reads first) and ``reasoning`` (vLLM since, Groq, Cerebras, OpenRouter)
            head_fields = {"role": message["role"], "content": message["content"]}
            message = {**head_fields, "reasoning_content": reasoning, "reasoning": reasoning, **message}
            reasoning_tokens += _content.count_tokens(reasoning)
        choices.append({"index": index, "message": message, "logprobs": logprobs, "finish_reason": finish})

    usage = usage_of(prompt_tokens, completion_tokens + reasoning_tokens, reasoning_tokens)
    tokens = usage["total_tokens"]
    if not stream:
        head.update(choices=choices, usage=usage, service_tier="default")  # the whole answer, in OpenAI's order
        return json_reply(head, tokens=tokens)
    return sse_reply(_chat_chunks(head, choices, usage if include_usage else None), tokens=tokens)


def _chat_chunks(
    head: dict[str, Any], choices: list[dict[str, Any]], usage: dict[str, Any] | None
) -> list[dict[str, Any]]:
    """OpenAI's chunk sequence: role, one delta per token, finish, then usage if asked."""
    chunk_head = {**head, "object": "chat.completion.chunk"}
    extra = {"usage": None} if usage is not None else {}
    events: list[dict[str, Any]] = []

    def emit(index: int, delta: dict[str, Any], logprobs: Any = None, finish: str | None = None) -> None:
        chunk = {"index": index, "delta": delta, "logprobs": logprobs, "finish_reason": finish}
        events.append({**chunk_head, "choices": [chunk], **extra})

    for choice in choices:
        index, message = choice["index"], choice["message"]
        emit(index, {"role": "assistant", "content": ""})
        # thinking streams first, as vLLM and DeepSeek send it
        for piece in _tokenizer.pieces(message.get("reasoning_content") or ""):
            emit(index, {"reasoning_content": piece, "reasoning": piece})
        if message.get("tool_calls") or message.get("function_call"):
            for delta in _assistant.call_deltas(message):
                emit(index, delta)
        else:
            logprobs = (choice["logprobs"] or {}).get("content")  # one entry per piece of the same text
            for i, piece in enumerate(_tokenizer.pieces(message["content"])):
                emit(index, {"content": piece}, {"content": [logprobs[i]], "refusal": None} if logprobs else None)
        emit(index, {}, finish=choice["finish_reason"])
    if usage is not None:
        events.append({**chunk_head, "choices": [], "usage": usage})
    return events
