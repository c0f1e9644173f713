"""Content behaviours over real HTTP: ``reasoning``, ``think-empty``, ``length``, ``bad-tool-args``,
``unknown-tool`` and ``context-<n>``, on chat, legacy completions and the Responses API, streamed and not.

Each test reads what a real client (the openai SDK, litellm) makes of the reply, since that is
what an eval scores.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import litellm
import openai
import pytest

from evaljig_gateway import Gateway

from .conftest import FAKE_KEY

ASK = "What is the capital of France?"
MESSAGES: list[Any] = [{"role": "user", "content": ASK}]
WEATHER_CHAT: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
WEATHER_RESPONSES: Any = {"type": "function", "name": "get_weather", **WEATHER_CHAT["function"]}


def _chat_stream(client: openai.OpenAI, model: str, **extra: Any) -> tuple[str, str, str | None, Any]:
    """(reasoning, content, finish_reason, usage) joined from a streamed chat reply."""
    reasoning = content = ""
    finish, usage = None, None
    for chunk in client.chat.completions.create(
        model=model, messages=MESSAGES, stream=True, stream_options={"include_usage": True}, **extra
    ):
        usage = chunk.usage or usage
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta.model_dump()
        assert not (delta.get("reasoning_content") and delta.get("content")), "reasoning and answer in one delta"
        if delta.get("content"):
            assert reasoning or "think" not in model, "the answer streamed before the reasoning"
        reasoning += delta.get("reasoning_content") or ""
        content += delta.get("content") or ""
        finish = chunk.choices[0].finish_reason or finish
    return reasoning, content, finish, usage


# -- reasoning ---------------------------------------------------------------------------------------------


def test_chat_reasoning_comes_in_the_fields_servers_use(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model="gpt-stub", messages=MESSAGES)
    reply = client.chat.completions.create(model="reasoning-gpt-stub", messages=MESSAGES)
    message = reply.choices[0].message.model_dump()
    assert message["content"] == plain.choices[0].message.content  # the answer is the plain model's
    assert message["reasoning_content"]
    assert message["reasoning_content"] == message["reasoning"]
    assert ASK in message["reasoning_content"]
    assert reply.usage is not None
    assert plain.usage is not None
    details = reply.usage.completion_tokens_details
    assert details is not None
    assert details.reasoning_tokens
    assert details.reasoning_tokens > 0
    assert reply.usage.completion_tokens == plain.usage.completion_tokens + details.reasoning_tokens


def test_chat_reasoning_streams_before_the_answer(client: openai.OpenAI) -> None:
    whole = client.chat.completions.create(model="Reasoning-gpt", messages=MESSAGES)
    reasoning, content, finish, usage = _chat_stream(client, "Reasoning-gpt")
    assert reasoning == whole.choices[0].message.model_dump()["reasoning_content"]
    assert content == whole.choices[0].message.content
    assert finish == "stop"
    assert usage == whole.usage


def test_litellm_reads_the_reasoning(gateway: Gateway) -> None:
    """litellm maps the reply's reasoning to ``message.reasoning_content``: what lighteval would have to read."""
    reply = litellm.completion(
        model="openai/reasoning-gpt", messages=MESSAGES, api_base=gateway.base_url, api_key=FAKE_KEY
    )
    message = reply.choices[0].message  # type: ignore[union-attr]
    assert message.reasoning_content
    assert ASK in message.reasoning_content
    assert message.content


def test_responses_reasoning_item_comes_before_the_message(client: openai.OpenAI) -> None:
    plain = client.responses.create(model="gpt-stub", input=ASK)
    reply = client.responses.create(model="gpt-stub-reasoning", input=ASK)
    assert [item.type for item in reply.output] == ["reasoning", "message"]
    reasoning = reply.output[0]
    assert reasoning.type == "reasoning"
    assert ASK in reasoning.summary[0].text
    assert reply.output_text == plain.output_text
    assert reply.status == "completed"
    assert reply.usage is not None
    assert reply.usage.output_tokens_details.reasoning_tokens > 0
    streamed = list(client.responses.create(model="gpt-stub-reasoning", input=ASK, stream=True))
    kinds = [event.type for event in streamed]
    assert kinds.index("response.reasoning_summary_text.delta") < kinds.index("response.output_text.delta")
    summary = "".join(e.delta for e in streamed if e.type == "response.reasoning_summary_text.delta")
    assert summary == reasoning.summary[0].text
    assert [e.sequence_number for e in streamed] == list(range(len(streamed)))
    assert streamed[-1].type == "response.completed"
    final = streamed[-1].response
    assert [item.type for item in final.output] == ["reasoning", "message"]
    assert final.output_text == reply.output_text


def test_completions_reasoning_keeps_the_text_and_counts_the_hidden_tokens(client: openai.OpenAI) -> None:
    plain = client.completions.create(model="gpt-stub", prompt=ASK)
    reply = client.completions.create(model="reasoning-gpt-stub", prompt=ASK)
    assert reply.choices[0].text == plain.choices[0].text
    assert reply.usage is not None
    assert reply.usage.completion_tokens_details is not None
    assert reply.usage.completion_tokens_details.reasoning_tokens


# -- think-empty -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chat_think_empty_answers_empty_content_not_null(client: openai.OpenAI, stream: bool) -> None:
    if stream:
        reasoning, content, finish, usage = _chat_stream(client, "think-empty-gpt")
    else:
        reply = client.chat.completions.create(model="think-empty-gpt", messages=MESSAGES)
        message = reply.choices[0].message.model_dump()
        reasoning, content, finish, usage = message["reasoning_content"], message["content"], None, reply.usage
        assert reply.choices[0].finish_reason == "stop"
    assert content == ""
    assert ASK in reasoning
    assert usage.completion_tokens == usage.completion_tokens_details.reasoning_tokens > 0
    assert finish in (None, "stop")


def test_chat_think_empty_content_is_an_empty_string_on_the_wire(http: httpx.Client) -> None:
    body = http.post("/v1/chat/completions", json={"model": "think-empty", "messages": MESSAGES}).json()
    assert body["choices"][0]["message"]["content"] == ""


def test_litellm_sees_think_empty_as_an_empty_answer(gateway: Gateway) -> None:
    """What zeroes lighteval's scores: content empty, everything in reasoning_content."""
    reply = litellm.completion(
        model="openai/think-empty", messages=MESSAGES, api_base=gateway.base_url, api_key=FAKE_KEY
    )
    message = reply.choices[0].message  # type: ignore[union-attr]
    assert not message.content
    assert message.reasoning_content


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_responses_think_empty(client: openai.OpenAI, stream: bool) -> None:
    if stream:
        events = list(client.responses.create(model="think-empty", input=ASK, stream=True))
        assert not [e for e in events if e.type == "response.output_text.delta"]
        reply = events[-1].response  # type: ignore[union-attr]
    else:
        reply = client.responses.create(model="think-empty", input=ASK)
    assert [item.type for item in reply.output] == ["reasoning", "message"]
    assert reply.output_text == ""
    assert reply.usage is not None
    assert reply.usage.output_tokens == reply.usage.output_tokens_details.reasoning_tokens


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_completions_think_empty_answers_empty_text(client: openai.OpenAI, stream: bool) -> None:
    if stream:
        chunks = list(client.completions.create(model="think-empty", prompt=ASK, stream=True))
        text = "".join(c.choices[0].text for c in chunks if c.choices)
    else:
        reply = client.completions.create(model="think-empty", prompt=ASK)
        text = reply.choices[0].text
        assert reply.usage is not None
        assert reply.usage.completion_tokens > 0
    assert text == ""


# -- length ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chat_length_cuts_the_answer(client: openai.OpenAI, stream: bool) -> None:
    full = client.chat.completions.create(model="gpt-stub", messages=MESSAGES).choices[0].message.content
    assert full
    if stream:
        _, content, finish, _ = _chat_stream(client, "gpt-stub-length")
    else:
        choice = client.chat.completions.create(model="gpt-stub-length", messages=MESSAGES).choices[0]
        content, finish = choice.message.content or "", choice.finish_reason
    assert finish == "length"
    assert content
    assert full.startswith(content)
    assert len(content) < len(full)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_completions_length(client: openai.OpenAI, stream: bool) -> None:
    full = client.completions.create(model="gpt-stub", prompt=ASK, max_tokens=64).choices[0].text
    if stream:
        chunks = list(client.completions.create(model="length", prompt=ASK, max_tokens=64, stream=True))
        text = "".join(c.choices[0].text for c in chunks)
        finish = [c.choices[0].finish_reason for c in chunks][-1]
    else:
        choice = client.completions.create(model="length", prompt=ASK, max_tokens=64).choices[0]
        text, finish = choice.text, choice.finish_reason
    assert finish == "length"
    assert text
    assert full.startswith(text)
    assert len(text) < len(full)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_responses_length_is_incomplete(client: openai.OpenAI, stream: bool) -> None:
    full = client.responses.create(model="gpt-stub", input=ASK).output_text
    if stream:
        events = list(client.responses.create(model="length-gpt-stub", input=ASK, stream=True))
        assert events[-1].type == "response.incomplete"
        reply = events[-1].response
    else:
        reply = client.responses.create(model="length-gpt-stub", input=ASK)
    assert reply.status == "incomplete"
    assert reply.incomplete_details is not None
    assert reply.incomplete_details.reason == "max_output_tokens"
    assert reply.output_text
    assert full.startswith(reply.output_text)
    assert reply.output_text != full


# -- tool calls --------------------------------------------------------------------------------------------


def _chat_call(client: openai.OpenAI, model: str, stream: bool) -> tuple[str, str]:
    """(name, arguments) of the first tool call, whole or joined from the stream."""
    kwargs: Any = {"model": model, "messages": MESSAGES, "tools": [WEATHER_CHAT], "tool_choice": "required"}
    if not stream:
        call = client.chat.completions.create(**kwargs).choices[0].message.tool_calls
        assert call is not None
        assert call[0].type == "function"
        return call[0].function.name, call[0].function.arguments
    name = arguments = ""
    for chunk in client.chat.completions.create(**kwargs, stream=True):
        for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            assert delta.function is not None
            name += delta.function.name or ""
            arguments += delta.function.arguments or ""
    return name, arguments


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chat_bad_tool_args_are_not_json(client: openai.OpenAI, stream: bool) -> None:
    name, good = _chat_call(client, "gpt-stub", stream)
    assert json.loads(good)
    bad_name, arguments = _chat_call(client, "bad-tool-args-gpt", stream)
    assert bad_name == name == "get_weather"
    with pytest.raises(json.JSONDecodeError):
        json.loads(arguments)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chat_unknown_tool_calls_a_tool_not_offered(client: openai.OpenAI, stream: bool) -> None:
    name, arguments = _chat_call(client, "unknown-tool-gpt", stream)
    assert name == "evaljig_unknown_tool"
    assert json.loads(arguments)  # only the name is wrong


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_responses_broken_tool_calls(client: openai.OpenAI, stream: bool) -> None:
    kwargs: Any = {"input": ASK, "tools": [WEATHER_RESPONSES], "tool_choice": "required"}
    if stream:
        events = list(client.responses.create(model="unknown-tool-bad-tool-args", stream=True, **kwargs))
        done = [e for e in events if e.type == "response.function_call_arguments.done"]
        deltas = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
        assert len(done) == 1
        assert done[0].arguments == deltas
        reply = events[-1].response  # type: ignore[union-attr]
    else:
        reply = client.responses.create(model="unknown-tool-bad-tool-args", **kwargs)
    [call] = reply.output
    assert call.type == "function_call"
    assert call.name == "evaljig_unknown_tool"
    with pytest.raises(json.JSONDecodeError):
        json.loads(call.arguments)


def test_a_text_answer_is_left_alone_by_the_tool_behaviours(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model="gpt-stub", messages=MESSAGES).choices[0].message.content
    reply = client.chat.completions.create(model="gpt-stub-bad-tool-args-unknown-tool", messages=MESSAGES)
    assert reply.choices[0].message.content == plain


# -- context-<n> -------------------------------------------------------------------------------------------

LONG = " ".join(["word"] * 40)  # 40 tokens: over 20, under 100


def test_chat_context_overflow_is_openais_400(client: openai.OpenAI, http: httpx.Client) -> None:
    assert client.chat.completions.create(model="context-100", messages=[{"role": "user", "content": LONG}])
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="context-20", messages=[{"role": "user", "content": LONG}])
    assert caught.value.code == "context_length_exceeded"
    answer = http.post(
        "/v1/chat/completions", json={"model": "context-20", "messages": [{"role": "user", "content": LONG}]}
    )
    assert answer.status_code == 400
    assert answer.json() == {
        "error": {
            "message": "This model's maximum context length is 20 tokens. However, your messages resulted in "
            "40 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }


def test_chat_context_overflow_streamed_is_the_same_400(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="Context-20", messages=[{"role": "user", "content": LONG}], stream=True)
    assert caught.value.code == "context_length_exceeded"


def test_litellm_raises_its_context_window_error(gateway: Gateway) -> None:
    with pytest.raises(litellm.ContextWindowExceededError):
        litellm.completion(
            model="openai/context-20",
            messages=[{"role": "user", "content": LONG}],
            api_base=gateway.base_url,
            api_key=FAKE_KEY,
            num_retries=0,
        )


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_completions_and_responses_context_overflow(client: openai.OpenAI, stream: bool) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.completions.create(model="context-20", prompt=LONG, max_tokens=5, stream=stream)
    assert caught.value.code == "context_length_exceeded"
    assert caught.value.param == "prompt"
    assert "40 in your prompt; 5 for the completion" in caught.value.message
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="context-20", input=LONG, stream=stream)
    assert caught.value.code == "context_length_exceeded"
    assert caught.value.param == "input"
    assert "exceeds the context window" in caught.value.message


def test_a_context_overflow_does_not_use_up_fail_once(client: openai.OpenAI, gateway: Gateway) -> None:
    """The 400 is a validation error: it is not an attempt, so fail-once still fails the next valid call."""
    impatient = client.with_options(max_retries=0)
    with pytest.raises(openai.BadRequestError):
        impatient.chat.completions.create(model="fail-once-context-20", messages=[{"role": "user", "content": LONG}])
    with pytest.raises(openai.InternalServerError):
        impatient.chat.completions.create(model="fail-once-context-20", messages=MESSAGES)
    assert [c.status for c in gateway.calls()] == [400, 500]


def test_a_tool_call_comes_with_reasoning_too(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(
        model="reasoning", messages=MESSAGES, tools=[WEATHER_CHAT], tool_choice="required"
    )
    message = reply.choices[0].message
    assert message.tool_calls
    assert ASK in message.model_dump()["reasoning_content"]
    chunks = list(
        client.chat.completions.create(
            model="reasoning", messages=MESSAGES, tools=[WEATHER_CHAT], tool_choice="required", stream=True
        )
    )
    kinds = [
        "reasoning"
        if c.choices[0].delta.model_dump().get("reasoning_content")
        else "call"
        if c.choices[0].delta.tool_calls
        else ""
        for c in chunks
        if c.choices
    ]
    assert kinds.index("reasoning") < kinds.index("call")
    answer = client.responses.create(model="reasoning", input=ASK, tools=[WEATHER_RESPONSES], tool_choice="required")
    assert [item.type for item in answer.output] == ["reasoning", "function_call"]
