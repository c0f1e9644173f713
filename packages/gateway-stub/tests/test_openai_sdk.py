"""The gateway as the real OpenAI SDK sees it, retries included."""

from __future__ import annotations

import base64
import json
import struct

import openai
import pytest

from evaljig_gateway import Gateway

from .conftest import openai_client

MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]


def test_chat_completion(client: openai.OpenAI, gateway: Gateway) -> None:
    reply = client.chat.completions.create(model="gpt-stub", messages=MESSAGES)
    assert reply.choices[0].message.content
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage is not None
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens > 0
    [call] = gateway.calls()
    assert (call.method, call.path, call.model, call.status, call.attempt) == (
        "POST",
        "/v1/chat/completions",
        "gpt-stub",
        200,
        1,
    )
    assert call.body["messages"] == MESSAGES


def test_same_request_same_bytes_across_gateways(gateway: Gateway) -> None:
    import httpx

    payload = {"model": "gpt-stub", "messages": MESSAGES, "logprobs": True, "top_logprobs": 2}
    first = httpx.post(f"{gateway.base_url}/chat/completions", json=payload).content
    with Gateway() as other:
        second = httpx.post(f"{other.base_url}/chat/completions", json=payload).content
    assert first == second


def test_fail_once_is_retried_by_the_sdk(client: openai.OpenAI, gateway: Gateway) -> None:
    reply = client.chat.completions.create(model="fail-once", messages=MESSAGES)
    assert reply.choices[0].message.content
    assert [(c.status, c.attempt) for c in gateway.calls(model="fail-once")] == [(500, 1), (200, 2)]


def test_always_fail_exhausts_the_sdk_retries(client: openai.OpenAI, gateway: Gateway) -> None:
    with pytest.raises(openai.InternalServerError, match="fails call 3"):
        client.chat.completions.create(model="always-fail", messages=MESSAGES)
    # the SDK's default max_retries=2: one call plus two retries
    assert [c.status for c in gateway.calls(model="always-fail")] == [500, 500, 500]


def test_fail_n_then_success_with_enough_retries(gateway: Gateway) -> None:
    patient = openai_client(gateway.base_url, max_retries=4)
    patient.chat.completions.create(model="fail-3", messages=MESSAGES)
    assert [c.status for c in gateway.calls(model="fail-3")] == [500, 500, 500, 200]


def test_rate_limit_headers(gateway: Gateway) -> None:
    impatient = openai_client(gateway.base_url, max_retries=0)
    with pytest.raises(openai.RateLimitError) as caught:
        impatient.chat.completions.create(model="rate-limit", messages=MESSAGES)
    headers = caught.value.response.headers
    assert headers["retry-after"] == "1"
    assert headers["retry-after-ms"] == "1"
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert caught.value.body["type"] == "requests"  # type: ignore[index]


def test_bad_request_model(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="rejects every request"):
        client.chat.completions.create(model="bad-request", messages=MESSAGES)


def test_malformed_body_breaks_the_client(gateway: Gateway) -> None:
    impatient = openai_client(gateway.base_url, max_retries=0)
    with pytest.raises((openai.APIResponseValidationError, json.JSONDecodeError)):
        impatient.chat.completions.create(model="malformed", messages=MESSAGES)
    assert [c.status for c in gateway.calls(model="malformed")] == [200]


def test_stall_outlasts_the_client_timeout(gateway: Gateway) -> None:
    impatient = openai_client(gateway.base_url, max_retries=0, timeout=0.2)
    with pytest.raises(openai.APITimeoutError):
        impatient.chat.completions.create(model="stall", messages=MESSAGES)


def test_slow_model_still_answers(client: openai.OpenAI, gateway: Gateway) -> None:
    reply = client.chat.completions.create(model="slow-20", messages=MESSAGES)
    assert reply.choices[0].message.content
    assert [c.status for c in gateway.calls(model="slow-20")] == [200]


def test_streaming_with_usage(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model="gpt-stub", messages=MESSAGES)
    stream = client.chat.completions.create(
        model="gpt-stub", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain.choices[0].message.content
    assert chunks[-1].choices == []
    assert chunks[-1].usage == plain.usage
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"


def test_streaming_without_usage(client: openai.OpenAI) -> None:
    chunks = list(client.chat.completions.create(model="gpt-stub", messages=MESSAGES, stream=True))
    assert all(c.usage is None for c in chunks)


def test_logprobs(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(model="gpt-stub", messages=MESSAGES, logprobs=True, top_logprobs=3)
    logprobs = reply.choices[0].logprobs
    assert logprobs is not None
    assert logprobs.content is not None
    assert "".join(t.token for t in logprobs.content) == reply.choices[0].message.content  # spaces included
    for token in logprobs.content:
        assert token.logprob <= 0
        assert len(token.top_logprobs) == 3
        assert token.top_logprobs[0].token == token.token


def test_logprobs_without_alternatives(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(model="gpt-stub", messages=MESSAGES, logprobs=True, top_logprobs=0)
    logprobs = reply.choices[0].logprobs
    assert logprobs is not None
    assert logprobs.content
    assert [len(t.top_logprobs) for t in logprobs.content] == [0] * len(logprobs.content)


def test_max_tokens_cuts_with_length(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(model="gpt-stub", messages=MESSAGES, max_tokens=2)
    assert reply.choices[0].finish_reason == "length"
    assert reply.usage is not None
    assert reply.usage.completion_tokens == 2


def test_n_choices_differ(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(model="gpt-stub", messages=MESSAGES, n=3)
    assert [c.index for c in reply.choices] == [0, 1, 2]
    assert len({c.message.content for c in reply.choices}) == 3


def test_tool_call_and_tool_result(client: openai.OpenAI) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            },
        }
    ]
    reply = client.chat.completions.create(model="gpt-stub", messages=MESSAGES, tools=tools)  # type: ignore[arg-type]
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    [call] = choice.message.tool_calls or []
    assert call.function.name == "get_weather"  # type: ignore[union-attr]
    assert set(json.loads(call.function.arguments)) == {"city"}  # type: ignore[union-attr]
    follow_up = [
        *MESSAGES,
        choice.message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "sunny"},
    ]
    final = client.chat.completions.create(model="gpt-stub", messages=follow_up, tools=tools)  # type: ignore[arg-type]
    assert final.choices[0].finish_reason == "stop"
    assert final.choices[0].message.content


def test_answer_key(client: openai.OpenAI, gateway: Gateway) -> None:
    gateway.set_answers({"What is the capital of France?": "B"})
    reply = client.chat.completions.create(model="gpt-stub", messages=MESSAGES)
    assert reply.choices[0].message.content == "B"


def test_completions(client: openai.OpenAI) -> None:
    reply = client.completions.create(model="gpt-stub", prompt="Say hi", max_tokens=50, logprobs=2, echo=True)
    choice = reply.choices[0]
    assert choice.text.startswith("Say hi")
    assert choice.logprobs is not None
    assert len(choice.logprobs.tokens or []) == len(choice.logprobs.token_logprobs or [])
    assert reply.usage is not None
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens


def test_completions_stream(client: openai.OpenAI) -> None:
    plain = client.completions.create(model="gpt-stub", prompt="Say hi", max_tokens=50)
    chunks = list(client.completions.create(model="gpt-stub", prompt="Say hi", max_tokens=50, stream=True))
    assert "".join(c.choices[0].text for c in chunks) == plain.choices[0].text
    assert chunks[-1].choices[0].finish_reason == "stop"


@pytest.mark.parametrize("dimensions", [8, 256])
def test_embeddings_sdk_default_base64(client: openai.OpenAI, dimensions: int) -> None:
    reply = client.embeddings.create(model="text-embedding-stub", input=["a", "b"], dimensions=dimensions)
    assert [len(d.embedding) for d in reply.data] == [dimensions, dimensions]
    assert reply.data[0].embedding != reply.data[1].embedding
    assert reply.usage.prompt_tokens == 2


def test_embeddings_float_and_base64_agree(gateway: Gateway) -> None:
    import httpx

    url = f"{gateway.base_url}/embeddings"
    floats = httpx.post(url, json={"model": "e", "input": "x", "dimensions": 4}).json()["data"][0]["embedding"]
    packed = httpx.post(url, json={"model": "e", "input": "x", "dimensions": 4, "encoding_format": "base64"}).json()
    decoded = struct.unpack("<4f", base64.b64decode(packed["data"][0]["embedding"]))
    assert decoded == pytest.approx(floats, abs=1e-6)


def test_models(client: openai.OpenAI) -> None:
    ids = [m.id for m in client.models.list()]
    assert "fail-once" in ids
    assert client.models.retrieve("anything-goes").id == "anything-goes"


def test_responses_api(client: openai.OpenAI, gateway: Gateway) -> None:
    gateway.set_answers({"capital of France": "Paris"})
    reply = client.responses.create(model="gpt-stub", input="What is the capital of France?", instructions="Be brief.")
    assert reply.output_text == "Paris"
    assert reply.usage is not None
    assert reply.usage.total_tokens == reply.usage.input_tokens + reply.usage.output_tokens
