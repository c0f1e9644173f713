"""Every corpus fixture against the live gateway, and each response-contract check against a misbehaving target."""

from __future__ import annotations

import base64
import copy
import json
import re
import struct
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from evaljig_corpus import (
    CONFORMANCE_CHECKS,
    FAULT_CAPABILITIES,
    CapabilityFixture,
    ConformanceError,
    assert_chat_conformance,
    assert_embed_conformance,
    assert_loglikelihood_conformance,
    assert_logprobs_conformance,
    assert_models_conformance,
    assert_responses_stream_conformance,
    assert_responses_tools_conformance,
    assert_stream_conformance,
    assert_tools_conformance,
    configured_client,
    iter_all_fixtures,
    load_capability_fixture,
    run_corpus,
)
from evaljig_corpus._corpus_run import render_table
from evaljig_gateway import Gateway

FIXTURES = list(iter_all_fixtures())
#: The fixtures a real provider passes: the fault capabilities ask a target to play a failure.
API_FIXTURES = [f for f in FIXTURES if f.capability not in FAULT_CAPABILITIES]
STUB_MODELS = {"gpt-stub": "gpt-stub", "embed-stub": "embed-stub"}


@pytest.mark.gateway
@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.id for f in FIXTURES])
def test_fixture_against_the_gateway(gateway: Gateway, fixture: CapabilityFixture) -> None:
    helper = CONFORMANCE_CHECKS[fixture.capability]
    if fixture.is_valid:
        helper(gateway.base_url, **fixture.kwargs())
        return
    with pytest.raises(ConformanceError) as caught:
        helper(gateway.base_url, **fixture.kwargs())
    assert caught.value.capability == fixture.capability
    assert fixture.matches(str(caught.value)), f"/{fixture.expected_error_pattern}/ !~ {caught.value}"


INVALID_SERVER_SIDE = [f for f in API_FIXTURES if not f.is_valid and f.capability != "models"]


@pytest.mark.gateway
@pytest.mark.parametrize("fixture", INVALID_SERVER_SIDE, ids=[f.id for f in INVALID_SERVER_SIDE])
def test_invalid_patterns_hold_for_other_servers_wording(gateway: Gateway, fixture: CapabilityFixture) -> None:
    """The charter: a pattern names the field and the status class, so any server naming the field matches it."""
    with pytest.raises(ConformanceError) as caught:
        CONFORMANCE_CHECKS[fixture.capability](gateway.base_url, **fixture.kwargs())
    field = caught.value.field  # the gateway's ``param``
    other_servers = [
        f"{fixture.capability}: {field}: target rejected the request with HTTP 422 (param '{field}'): Invalid input.",
        f"{fixture.capability}: request: target rejected the request with HTTP 400: '{field}' is not acceptable.",
    ]
    for message in other_servers:
        assert fixture.matches(message), f"/{fixture.expected_error_pattern}/ !~ {message}"


@pytest.mark.gateway
def test_an_unprintable_key_never_reaches_the_report(gateway: Gateway) -> None:
    key = "sk-SECRET123\r"  # httpx refuses the header and shows it escaped: b'Bearer sk-SECRET123\\r'
    fixtures = [load_capability_fixture("models", "valid_baseline")]
    with configured_client(gateway.base_url, key) as client:
        [outcome] = run_corpus(client, fixtures, STUB_MODELS, redact=[key])
    assert not outcome.passed
    assert "***" in outcome.detail
    assert "SECRET123" not in outcome.detail
    assert "SECRET123" not in render_table([outcome], redact=[key])


@pytest.mark.gateway
def test_a_configured_client_is_a_target_too(gateway: Gateway) -> None:
    with configured_client(gateway.base_url, "sk-evaljig-test") as client:
        assert client.headers["authorization"] == "Bearer sk-evaljig-test"
        answer = assert_chat_conformance(client, **load_capability_fixture("chat", "valid_baseline").kwargs())
    assert answer["object"] == "chat.completion"
    assert [c.status for c in gateway.calls(model="gpt-stub")] == [200]


@pytest.mark.gateway
def test_run_corpus_reports_each_capability(gateway: Gateway) -> None:
    outcomes = run_corpus(gateway.base_url, FIXTURES, STUB_MODELS)  # the fault capabilities too: it plays them
    assert all(o.passed for o in outcomes), [o.detail for o in outcomes if not o.passed]
    table = render_table(outcomes)
    assert "| chat | 4 | 4 | 0 | PASS |" in table
    assert "failures:" not in table


@pytest.mark.gateway
def test_a_failing_target_is_reported_with_its_reason(gateway: Gateway) -> None:
    fixtures = [load_capability_fixture("chat", "valid_baseline"), load_capability_fixture("models", "valid_baseline")]
    outcomes = run_corpus(gateway.base_url, fixtures, {"gpt-stub": "always-fail"})
    assert [o.passed for o in outcomes] == [False, True]
    assert "chat: response: target failed with HTTP 500" in outcomes[0].detail
    table = render_table(outcomes, redact=["always-fail"])
    assert "| chat | 1 | 0 | 1 | FAIL |" in table
    assert "always-fail" not in table


def test_an_unreachable_target_is_a_conformance_error() -> None:
    with pytest.raises(ConformanceError, match=r"^models: request: GET /models failed before a response arrived"):
        assert_models_conformance("http://127.0.0.1:9/v1", timeout=2)


@pytest.mark.gateway
def test_malformed_json_is_named(gateway: Gateway) -> None:
    with pytest.raises(ConformanceError, match=r"^chat: response: body is not valid JSON"):
        assert_chat_conformance(gateway.base_url, model="malformed", messages=[{"role": "user", "content": "hi"}])


@pytest.mark.gateway
def test_base64_embeddings_are_decoded(gateway: Gateway) -> None:
    kwargs = load_capability_fixture("embed", "valid_baseline").kwargs()
    data = assert_embed_conformance(gateway.base_url, **{**kwargs, "encoding_format": "base64"})
    assert len(data["data"]) == 2


# --------------------------------------------------------------------------- misbehaving targets


def fake(
    body: Any, *, status: int = 200, content_type: str = "application/json", missing: str | None = None
) -> httpx.Client:
    """A configured client whose every answer is ``body`` (404 at path ``missing``): no server needed."""
    raw = body if isinstance(body, str) else json.dumps(body)

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == missing:
            return httpx.Response(404, json={"error": {"message": "The model does not exist.", "param": None}})
        return httpx.Response(status, text=raw, headers={"content-type": content_type})

    return httpx.Client(base_url="http://fake.invalid/v1", transport=httpx.MockTransport(handler))


def sse(*events: Any) -> str:
    return "".join(f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events)


CHAT_ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "Paris."}, "logprobs": None, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
}
HI = [{"role": "user", "content": "hi"}]


def changed(base: dict[str, Any], change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    body = copy.deepcopy(base)
    change(body)
    return body


def test_a_conforming_fake_passes() -> None:
    assert assert_chat_conformance(fake(CHAT_ANSWER), model="m", messages=HI)["id"] == "chatcmpl-1"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda b: b["usage"].update(total_tokens=8),
            "chat: usage.total_tokens: must equal prompt_tokens + completion",
        ),
        (lambda b: b["usage"].update(prompt_tokens=-1), "chat: usage.prompt_tokens: must be >= 0, got -1"),
        (lambda b: b["usage"].update(completion_tokens=True), "chat: usage.completion_tokens: must be an integer, got"),
        (lambda b: b.pop("usage"), "chat: usage: must be an object, got null"),
        (lambda b: b.update(object="text_completion"), "chat: response.object: must be 'chat.completion'"),
        (lambda b: b["choices"][0].update(index=3), r"chat: choices[].index: must be 0..0 once each, got [3]"),
        (lambda b: b["choices"][0].update(finish_reason="done"), "chat: choices[0].finish_reason: must be one of"),
        (
            lambda b: b["choices"][0]["message"].update(role="user"),
            "chat: choices[0].message.role: must be 'assistant'",
        ),
        (lambda b: b.update(choices=[]), "chat: choices: must hold 1 choice(s), got 0"),
    ],
)
def test_chat_contract_violations(change: Callable[[dict[str, Any]], Any], message: str) -> None:
    with pytest.raises(ConformanceError) as caught:
        assert_chat_conformance(fake(changed(CHAT_ANSWER, change)), model="m", messages=HI)
    assert str(caught.value).startswith(message)


def test_http_errors_name_the_param() -> None:
    error = {"error": {"message": "Invalid value for 'n'.", "type": "invalid_request_error", "param": "n"}}
    with pytest.raises(ConformanceError) as caught:
        assert_chat_conformance(fake(error, status=400), model="m", messages=HI, n=0)
    assert str(caught.value) == (
        "chat: n: target rejected the request with HTTP 400 (param 'n'): Invalid value for 'n'."
    )
    assert caught.value.status == 400


CHUNK = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}


def delta(content: str | None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choice = {"index": 0, "delta": {} if content is None else {"content": content}, "finish_reason": finish}
    return {**CHUNK, "choices": [choice], **extra}


USAGE = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}


@pytest.mark.parametrize(
    ("stream", "message"),
    [
        (sse(delta("hi"), delta(None, "stop")), "stream: stream: must end with 'data: [DONE]'"),
        (sse(delta("hi"), delta(None, "stop"), "[DONE]", "[DONE]"), "stream: stream: must carry exactly one"),
        (sse(delta("hi"), "[DONE]"), "stream: stream: every choice must end with one finish_reason"),
        (sse(delta("hi", "stop"), delta("more"), "[DONE]"), "stream: events[1].choices[0].index: choice 0"),
        (sse(delta("hi", "stop"), {**delta("x"), "id": "c2"}, "[DONE]"), "stream: events[1].id: must be 'c1'"),
        (sse(delta("hi", "stop"), "{oops", "[DONE]"), "stream: events[1]: is not valid JSON"),
        (sse(delta("hi", "stop"), "[DONE]"), "stream: events[0].choices: must be [], got"),
        (sse(delta("hi", usage=USAGE), delta(None, "stop"), {**CHUNK, "choices": [], "usage": USAGE}, "[DONE]"),
         "stream: events[0].usage: must be null on every chunk but the last"),
        ("data: " + json.dumps(delta("hi", "stop")) + "\n\ndata: [DONE]\n", "stream: stream: must end with a blank"),
    ],
)  # fmt: skip
def test_stream_framing_violations(stream: str, message: str) -> None:
    client = fake(stream, content_type="text/event-stream")
    with pytest.raises(ConformanceError) as caught:
        assert_stream_conformance(client, model="m", messages=HI, stream_options={"include_usage": True})
    assert str(caught.value).startswith(message)


def test_streamed_usage_must_respect_max_tokens() -> None:
    usage = {"prompt_tokens": 1, "completion_tokens": 5, "total_tokens": 6}
    body = sse(delta("hi"), delta(None, "length"), {**CHUNK, "choices": [], "usage": usage}, "[DONE]")
    with pytest.raises(ConformanceError) as caught:
        assert_stream_conformance(
            fake(body, content_type="text/event-stream"),
            model="m",
            messages=HI,
            max_tokens=2,
            stream_options={"include_usage": True},
        )
    assert str(caught.value) == "stream: events[2].usage.completion_tokens: must be <= max_tokens (2)"


def test_stream_must_be_an_event_stream() -> None:
    with pytest.raises(ConformanceError, match=r"^stream: content-type: must be text/event-stream"):
        assert_stream_conformance(fake(CHAT_ANSWER), model="m", messages=HI)


def test_a_conforming_stream_passes() -> None:
    body = sse(delta("hi"), delta(None, "stop"), {**CHUNK, "choices": [], "usage": USAGE}, "[DONE]")
    chunks = assert_stream_conformance(
        fake(body, content_type="text/event-stream"), model="m", messages=HI, stream_options={"include_usage": True}
    )
    assert len(chunks) == 3


TOOLS = load_capability_fixture("tools", "valid_baseline").kwargs()


def tool_answer(name: str, arguments: str) -> dict[str, Any]:
    call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
    return {**CHAT_ANSWER, "choices": [choice]}


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (tool_answer("get_weather", "{city: Paris}"), "arguments: must be a JSON object, got unparsable text"),
        (tool_answer("get_weather", "[]"), "arguments: must be an object, got array"),
        (tool_answer("get_weather", '{"city": NaN}'), "arguments: must be a JSON object, got unparsable text (NaN is"),
        (tool_answer("get_weather", '{"city": -Infinity}'), "got unparsable text (-Infinity is not a JSON number)"),
        (tool_answer("get_weather", "[" * 100_000), "got unparsable text (nested deeper than 100 levels)"),
        (tool_answer("get_weather", '{"unit": "celsius"}'), "arguments: 'city' is a required property"),
        (tool_answer("get_weather", '{"city": 7}'), "arguments.city: 7 is not of type 'string'"),
        (
            tool_answer("get_weather", '{"city": "P", "unit": "K"}'),
            "arguments.unit: 'K' is not one of ['celsius', 'fahrenheit']",
        ),
        (tool_answer("get_time", '{"city": "P"}'), "function.name: must be one of 'get_weather', got 'get_time'"),
        (CHAT_ANSWER, "tools: choices[0].message.tool_calls: must be an array, got null"),
        (
            changed(tool_answer("get_weather", "{}"), lambda b: b["choices"][0].update(finish_reason="length")),
            "tools: choices[0].finish_reason: must be one of 'tool_calls', 'stop', got 'length'",
        ),
    ],
)
def test_tool_call_violations(answer: dict[str, Any], message: str) -> None:
    with pytest.raises(ConformanceError) as caught:
        assert_tools_conformance(fake(answer), **TOOLS)
    assert message in str(caught.value)


def logprob_answer(entry: dict[str, Any]) -> dict[str, Any]:
    return changed(CHAT_ANSWER, lambda b: b["choices"][0].update(logprobs={"content": [entry]}))


def spelled(*tokens: str, alternatives: int = 2) -> dict[str, Any]:
    """A logprobs answer whose tokens and content are given, with ``alternatives`` per token."""
    entries = [
        {"token": t, "logprob": -0.5, "top_logprobs": [{"token": t, "logprob": -0.5 - a} for a in range(alternatives)]}
        for t in tokens
    ]
    return changed(CHAT_ANSWER, lambda b: b["choices"][0].update(logprobs={"content": entries}))


def test_conforming_logprobs_pass() -> None:
    answer = spelled("Par", "is", ".")
    assert assert_logprobs_conformance(fake(answer), model="m", messages=HI, logprobs=True, top_logprobs=2)


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (
            spelled("Par", "is", ".", alternatives=1),
            "logprobs: choices[0].logprobs.content[0].top_logprobs: must hold exactly top_logprobs=2 entries, got 1",
        ),
        (
            spelled("Paris", " ", "."),
            "logprobs: choices[0].logprobs.content: tokens must join to the message content 'Paris.', got 'Paris .'",
        ),
        (spelled("Lyon", "."), "logprobs: choices[0].logprobs.content: tokens must join to the message content"),
    ],
)
def test_logprobs_must_be_for_the_answer_given(answer: dict[str, Any], message: str) -> None:
    with pytest.raises(ConformanceError) as caught:
        assert_logprobs_conformance(fake(answer), model="m", messages=HI, logprobs=True, top_logprobs=2)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"token": "P", "logprob": 0.5, "top_logprobs": []}, "content[0].logprob: must be <= 0.0, got 0.5"),
        ({"token": "P", "logprob": -1, "bytes": [300], "top_logprobs": []}, "content[0].bytes[0]: must be a byte"),
        ({"token": "P", "logprob": -1, "top_logprobs": [{"token": "a", "logprob": -1}] * 3}, "exactly top_logprobs=2"),
        (
            {
                "token": "P",
                "logprob": -1,
                "top_logprobs": [{"token": "a", "logprob": -2}, {"token": "b", "logprob": -1}],
            },
            "top_logprobs[1].logprob: alternatives must be sorted from most to least likely",
        ),
    ],
)
def test_logprob_range_violations(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ConformanceError) as caught:
        assert_logprobs_conformance(fake(logprob_answer(entry)), model="m", messages=HI, logprobs=True, top_logprobs=2)
    assert str(caught.value).startswith("logprobs: choices[0].logprobs.content[0].")
    assert message in str(caught.value)


EMBEDDINGS = {
    "object": "list",
    "model": "e",
    "data": [{"object": "embedding", "index": 0, "embedding": [0.6, 0.8]}],
    "usage": {"prompt_tokens": 2, "total_tokens": 2},
}


@pytest.mark.parametrize(
    ("change", "kwargs", "message"),
    [
        (lambda b: None, {"dimensions": 3}, "embed: data[0].embedding: must have dimensions=3 values, got 2"),
        (lambda b: b["data"][0].update(index=1), {}, "embed: data[0].index: must be 0, got 1"),
        (
            lambda b: b["data"][0].update(embedding=[0, 0]),
            {},
            "embed: data[0].embedding: must be a non-empty, non-zero",
        ),
        (lambda b: b["data"][0].update(embedding=[1, "x"]), {}, "embed: data[0].embedding[1]: must be a number"),
        (lambda b: b["usage"].update(total_tokens=3), {}, "embed: usage.total_tokens: must equal"),
        (lambda b: None, {"input": ["a", "b"]}, "embed: data: must hold one embedding per input (2), got 1"),
        (lambda b: None, {"encoding_format": "base64"}, "embed: data[0].embedding: must be a string, got array"),
    ],
)
def test_embedding_violations(change: Callable[[dict[str, Any]], Any], kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConformanceError) as caught:
        assert_embed_conformance(fake(changed(EMBEDDINGS, change)), **{"model": "e", "input": "a", **kwargs})
    assert str(caught.value).startswith(message)


def test_base64_embeddings_must_be_ascii() -> None:
    body = changed(EMBEDDINGS, lambda b: b["data"][0].update(embedding="AAAAPw==é"))
    with pytest.raises(ConformanceError, match=r"^embed: data\[0\]\.embedding: must be base64 when encoding_format"):
        assert_embed_conformance(fake(body), model="e", input="a", encoding_format="base64")


def test_base64_embeddings_must_be_float32() -> None:
    body = changed(EMBEDDINGS, lambda b: b["data"][0].update(embedding=base64.b64encode(b"abc").decode()))
    with pytest.raises(ConformanceError, match="must decode to little-endian float32 values, got 3 bytes"):
        assert_embed_conformance(fake(body), model="e", input="a", encoding_format="base64")
    good = changed(EMBEDDINGS, lambda b: b["data"][0].update(embedding=base64.b64encode(struct.pack("<2f", 0.6, 0.8))))
    good["data"][0]["embedding"] = good["data"][0]["embedding"].decode()
    assert assert_embed_conformance(fake(good), model="e", input="a", encoding_format="base64", dimensions=2)


MODELS = {"object": "list", "data": [{"id": "a", "object": "model", "created": 1, "owned_by": "me"}]}


@pytest.mark.parametrize(
    ("body", "model", "message"),
    [
        ({"object": "list", "data": []}, None, "models: data: must not be empty"),
        (
            changed(MODELS, lambda b: b["data"].append(b["data"][0])),
            None,
            "models: data[].id: must be unique, got ['a'",
        ),
        (changed(MODELS, lambda b: b["data"][0].pop("owned_by")), None, "models: data[0].owned_by: must be a string"),
        (
            MODELS,
            "b",
            "models: model: 'b' is neither listed by GET /models nor retrievable (target rejected the request with"
            " HTTP 404: The model does not exist.)",
        ),
        (MODELS, "/etc", "models: model: must not contain '..' segments, a leading '/' or whitespace"),
    ],
)
def test_model_listing_violations(body: dict[str, Any], model: str | None, message: str) -> None:
    with pytest.raises(ConformanceError) as caught:
        assert_models_conformance(fake(body, missing="/v1/models/b"), model=model)
    assert str(caught.value).startswith(message)


def test_target_must_be_a_url_or_a_client() -> None:
    with pytest.raises(TypeError, match="target must be an http"):
        assert_models_conformance("127.0.0.1:8000")


# --------------------------------------------------------------------------- answers no check anticipates

DEEP = "[" * 100_000 + "]" * 100_000  # deeper than Python's JSON parser recurses


@pytest.mark.parametrize(
    ("client", "message"),
    [
        (fake(DEEP), "chat: response: body is not valid JSON (maximum recursion depth exceeded"),
        (fake(DEEP, status=400), "chat: request: target rejected the request with HTTP 400: [[["),
    ],
)
def test_json_nested_too_deep_is_a_check_failure(client: httpx.Client, message: str) -> None:
    with pytest.raises(ConformanceError) as caught:
        assert_chat_conformance(client, model="m", messages=HI)
    assert str(caught.value).startswith(message)


def test_a_stream_event_nested_too_deep_is_a_check_failure() -> None:
    client = fake(sse(DEEP, "[DONE]"), content_type="text/event-stream")
    with pytest.raises(ConformanceError, match=r"^stream: events\[0\]: is not valid JSON \(maximum recursion depth"):
        assert_stream_conformance(client, model="m", messages=HI)


def test_an_unexpected_exception_fails_its_fixture_not_the_run() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise RuntimeError("transport bug near sk-SECRET123")

    broken = httpx.Client(base_url="http://fake.invalid/v1", transport=httpx.MockTransport(handler))
    fixtures = [
        load_capability_fixture("chat", "valid_baseline"),
        load_capability_fixture("chat", "invalid_unknown_role"),
    ]
    outcomes = run_corpus(broken, fixtures, STUB_MODELS, redact=["sk-SECRET123"])
    assert [(o.passed, o.detail) for o in outcomes] == [
        (False, "chat: unexpected RuntimeError: transport bug near ***")
    ] * 2


# --------------------------------------------------------------------------- loglikelihood and Responses

LL_PAYLOAD = load_capability_fixture("loglikelihood", "valid_baseline").kwargs()


def ll_answer(tokens: list[str], token_logprobs: list[Any], offsets: list[int] | None = None) -> dict[str, Any]:
    text = "".join(tokens)
    top = [None if lp is None else {t: lp} for t, lp in zip(tokens, token_logprobs, strict=True)]
    offsets = offsets if offsets is not None else [len("".join(tokens[:k])) for k in range(len(tokens))]
    logprobs = {"tokens": tokens, "token_logprobs": token_logprobs, "top_logprobs": top, "text_offset": offsets}
    return {
        "id": "cmpl-1",
        "object": "text_completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "text": text, "logprobs": logprobs, "finish_reason": "length"}],
        "usage": {"prompt_tokens": len(tokens), "completion_tokens": 0, "total_tokens": len(tokens)},
    }


def test_a_conforming_loglikelihood_answer_passes() -> None:
    answer = ll_answer(["The", " capital"], [None, -1.5])
    assert assert_loglikelihood_conformance(fake(answer), model="m", prompt=[[464, 3139]])["id"] == "cmpl-1"


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (ll_answer(["The", " capital"], [-0.1, -1.5]), "token_logprobs[0]: must be null"),
        (ll_answer(["The", "capital"], [None, -1.5]), "must echo one token per prompt token id"),
        (ll_answer(["The", " capital"], [None, 0.5]), "token_logprobs[1]: must be <= 0.0"),
        (ll_answer(["The", " capital"], [None, -1.5], [0, 4]), "text_offset: must be where each token starts"),
        (
            changed(
                ll_answer(["The", " capital"], [None, -1.5]), lambda b: b["choices"][0].update(text="The capital.")
            ),
            "logprobs.tokens: must join (whitespace included) to the choice text",
        ),
    ],
)
def test_loglikelihood_answers_that_cannot_be_scored_fail(answer: dict[str, Any], message: str) -> None:
    prompt = [[464, 3139]] if "one token per" not in message else [[464, 3139, 286]]
    with pytest.raises(ConformanceError, match=re.escape(message)):
        assert_loglikelihood_conformance(fake(answer), model="m", prompt=prompt)


RESPONSE = {
    "id": "resp_1",
    "object": "response",
    "status": "completed",
    "output": [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Hi there"}],
        }
    ],
    "usage": {"input_tokens": 2, "output_tokens": 2, "total_tokens": 4},
}


def response_events(deltas: list[str], final: dict[str, Any] = RESPONSE) -> list[dict[str, Any]]:
    item = final["output"][0]
    kinds: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": {**final, "status": "in_progress", "output": []}}),
        ("response.output_item.added", {"output_index": 0, "item": {**item, "content": []}}),
        *[("response.output_text.delta", {"output_index": 0, "delta": d}) for d in deltas],
        ("response.output_item.done", {"output_index": 0, "item": item}),
        ("response.completed", {"response": final}),
    ]
    return [{"type": kind, "sequence_number": n, **fields} for n, (kind, fields) in enumerate(kinds)]


def test_a_conforming_response_stream_passes() -> None:
    events = response_events(["Hi", " there"])
    client = fake(sse(*events), content_type="text/event-stream")
    assert assert_responses_stream_conformance(client, model="m", input="hi") == events


@pytest.mark.parametrize(
    ("events", "message"),
    [
        (response_events(["Hi", " here"]), "must be the joined output_text deltas"),
        (response_events(["Hi", " there"])[1:], "events[0].type: must be 'response.created'"),
        (response_events(["Hi", " there"])[:-1], "events[4].type: must be one of"),
        ([{**e, "sequence_number": 0} for e in response_events(["Hi"])], "sequence_number: must be increasing"),
    ],
)
def test_response_streams_that_do_not_rebuild_the_answer_fail(events: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(ConformanceError, match=re.escape(message)):
        assert_responses_stream_conformance(fake(sse(*events), content_type="text/event-stream"), model="m", input="hi")


def test_a_response_without_a_function_call_fails_the_tools_check() -> None:
    tools = load_capability_fixture("responses_tools", "valid_baseline").kwargs()["tools"]
    with pytest.raises(ConformanceError, match=r"response\.output: must hold a function_call item"):
        assert_responses_tools_conformance(fake(RESPONSE), model="m", input="hi", tools=tools)
    call = {
        "type": "function_call",
        "call_id": "c1",
        "name": "get_weather",
        "arguments": '{"city": 3, "unit": "celsius"}',
    }
    with pytest.raises(ConformanceError, match=r"arguments\.city: 3 is not of type 'string'"):
        assert_responses_tools_conformance(fake({**RESPONSE, "output": [call]}), model="m", input="hi", tools=tools)
