"""The fault capabilities (reasoning, truncation, broken_stream, token_limits, broken_tools): played or not.

Against the gateway, which plays the failures its model names ask for, every fixture passes (see
test_conformance.py). Against a server that ignores the tokens (the same gateway, reached through a
client that strips them from ``model``), every fault fixture must fail: a fake or a proxy that does
not play a failure is never reported as playing it. The checks' own verdicts are pinned on scripted
answers below.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from evaljig_corpus import (
    FAULT_CAPABILITIES,
    ConformanceError,
    assert_broken_stream_conformance,
    assert_reasoning_conformance,
    assert_token_limits_conformance,
    assert_truncation_conformance,
    iter_all_fixtures,
    run_corpus,
)
from evaljig_gateway import Gateway

FAULT_FIXTURES = [f for f in iter_all_fixtures() if f.capability in FAULT_CAPABILITIES]
#: The gateway's failure tokens these fixtures use; stripping them leaves the plain ``gpt-stub``.
TOKEN = re.compile(
    r"(reasoning|think-empty|length|cut-\d+|drop-\d+|garble-\d+|context-\d+|tpm-\d+|bad-tool-args|unknown-tool)-"
)
HI = [{"role": "user", "content": "hi"}]


class _IgnoresTokens(httpx.HTTPTransport):
    """Real HTTP to the gateway with the behaviour tokens taken out of ``model``: a server that plays none."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        body["model"] = TOKEN.sub("", body["model"])
        content = json.dumps(body).encode()
        headers = {k: v for k, v in request.headers.items() if k.lower() != "content-length"}
        plain = httpx.Request(request.method, request.url, headers=headers, content=content)
        return super().handle_request(plain)


def test_every_fault_capability_has_fixtures() -> None:
    assert {f.capability for f in FAULT_FIXTURES} == set(FAULT_CAPABILITIES)
    assert all(TOKEN.search(f.payload["model"]) for f in FAULT_FIXTURES if not f.is_valid)


@pytest.mark.gateway
def test_a_server_that_does_not_play_the_faults_fails_every_fault_fixture(gateway: Gateway) -> None:
    with httpx.Client(base_url=gateway.base_url, transport=_IgnoresTokens()) as plain:
        verdicts = run_corpus(plain, FAULT_FIXTURES, {})
    failed = {v.fixture.id: v.detail for v in verdicts if not v.passed}
    invalid = [f.id for f in FAULT_FIXTURES if not f.is_valid]
    assert sorted(failed) == sorted([*invalid, "reasoning.valid_baseline"])
    for fixture_id in invalid:  # a plain answer passes the check, or (reasoning) fails it for lack of reasoning
        expected = "rejected, but not with" if fixture_id.startswith("reasoning.") else "accepted; expected an error"
        assert failed[fixture_id].startswith(expected), failed[fixture_id]
    assert failed["reasoning.valid_baseline"] == (
        "reasoning: choices[0].message.reasoning: must carry the model's reasoning (in reasoning_content or reasoning)"
    )


# --------------------------------------------------------------------------- scripted answers


def fake(*responses: httpx.Response | str | dict[str, Any]) -> httpx.Client:
    """A client answered by ``responses`` in turn (a string is an event stream, a dict a JSON 200)."""
    queue: Iterator[httpx.Response | str | dict[str, Any]] = iter(responses)

    def handler(request: httpx.Request) -> httpx.Response:
        answer = next(queue)
        if isinstance(answer, httpx.Response):
            return answer
        if isinstance(answer, str):
            return httpx.Response(200, text=answer, headers={"content-type": "text/event-stream"})
        return httpx.Response(200, json=answer)

    return httpx.Client(base_url="http://fake.invalid/v1", transport=httpx.MockTransport(handler))


def answer(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }


CHUNK = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}


def chunk(finish: str | None = None, **delta: Any) -> str:
    return json.dumps({**CHUNK, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def sse(*events: str) -> str:
    return "".join(f"data: {e}\n\n" for e in events)


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_is_read_from_either_field(field: str) -> None:
    done = assert_reasoning_conformance(fake(answer({field: "3 x 17", "content": "51"})), model="m", messages=HI)
    assert done == {"reasoning": "3 x 17", "content": "51", "finish_reason": "stop"}


@pytest.mark.parametrize("content", [None, ""])
def test_reasoning_without_content_is_named(content: str | None) -> None:
    client = fake(answer({"reasoning_content": "3 x 17", "content": content}, finish="length"))
    with pytest.raises(ConformanceError, match=r"^reasoning: choices\[0\]\.message\.content: is empty"):
        assert_reasoning_conformance(client, model="m", messages=HI)


def test_streamed_reasoning_is_joined_from_the_deltas() -> None:
    body = sse(chunk(reasoning="3 x "), chunk(reasoning="17"), chunk("stop", content="51"), "[DONE]")
    done = assert_reasoning_conformance(fake(body), model="m", messages=HI, stream=True)
    assert done == {"reasoning": "3 x 17", "content": "51", "finish_reason": "stop"}
    with pytest.raises(ConformanceError, match=r"^reasoning: stream\.content: is empty"):
        assert_reasoning_conformance(fake(sse(chunk("stop", reasoning="x"), "[DONE]")), model="m", stream=True)


def test_a_cut_answer_is_named_streamed_or_not() -> None:
    with pytest.raises(ConformanceError, match=r"^truncation: choices\[0\]\.finish_reason: must be 'stop'.*'length'"):
        assert_truncation_conformance(fake(answer({"content": "one two"}, finish="length")), model="m")
    with pytest.raises(ConformanceError, match=r"^truncation: stream\.finish_reason: must be 'stop'.*'length'"):
        assert_truncation_conformance(fake(sse(chunk("length", content="one"), "[DONE]")), model="m", stream=True)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (sse(chunk(content="one"), chunk(content="two")), "broken_stream: stream: ended after 2 chunk(s) without"),
        (sse(chunk(content="one"), "{not json", "[DONE]"), "broken_stream: events[1]: is not valid JSON"),
        (sse(chunk("stop", content="one"), "[DONE]", chunk(content="x")), "broken_stream: stream: sent data after"),
        (sse("[DONE]"), "broken_stream: stream: must carry at least one chunk"),
    ],
)
def test_broken_streams_are_named(body: str, message: str) -> None:
    with pytest.raises(ConformanceError) as caught:
        assert_broken_stream_conformance(fake(body), model="m", messages=HI)
    assert str(caught.value).startswith(message)


RESPONSE_EVENTS = [
    {"type": "response.created", "sequence_number": 0},
    {"type": "response.output_text.delta", "sequence_number": 1, "delta": "one"},
]


def test_a_responses_stream_must_reach_response_completed() -> None:
    whole = sse(*(json.dumps(e) for e in [*RESPONSE_EVENTS, {"type": "response.completed", "sequence_number": 2}]))
    assert len(assert_broken_stream_conformance(fake(whole), model="m", input="hi", api="responses")) == 3
    with pytest.raises(ConformanceError) as caught:
        assert_broken_stream_conformance(fake(sse(*map(json.dumps, RESPONSE_EVENTS))), model="m", api="responses")
    assert str(caught.value) == (
        "broken_stream: stream: ended after 2 event(s) without 'response.completed': the answer is cut"
    )
    with pytest.raises(TypeError, match="api must be 'chat' or 'responses'"):
        assert_broken_stream_conformance(fake(), model="m", api="completions")


class _Dropped(httpx.SyncByteStream):
    """Two chunks, then the connection goes away, as httpx reports a peer that closed mid-body."""

    def __iter__(self) -> Iterator[bytes]:
        yield sse(chunk(content="one"), chunk(content="two")).encode()
        raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")


def test_a_closed_connection_is_named_with_the_chunks_before_it() -> None:
    dropped = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=_Dropped())
    with pytest.raises(ConformanceError) as caught:
        assert_broken_stream_conformance(fake(dropped), model="m", messages=HI)
    assert str(caught.value) == (
        "broken_stream: stream: connection closed after 2 chunk(s), before 'data: [DONE]' (RemoteProtocolError)"
    )


RATE_HEADERS = {"retry-after": "2", "x-ratelimit-limit-tokens": "60", "x-ratelimit-remaining-tokens": "0"}
RATE_ERROR = {
    "error": {"message": "Rate limit reached.", "type": "tokens", "param": None, "code": "rate_limit_exceeded"}
}


def test_a_token_limit_429_names_the_call_and_its_headers() -> None:
    limited = httpx.Response(429, json=RATE_ERROR, headers=RATE_HEADERS)
    with pytest.raises(ConformanceError) as caught:
        assert_token_limits_conformance(fake(answer({"content": "a"}), limited), model="m", messages=HI, calls=3)
    assert str(caught.value) == (
        "token_limits: request: HTTP 429 on call 2 (code 'rate_limit_exceeded'; retry-after: 2, "
        "x-ratelimit-limit-tokens: 60, x-ratelimit-remaining-tokens: 0): Rate limit reached."
    )
    bare = httpx.Response(429, json=RATE_ERROR, headers={"retry-after": "2"})
    with pytest.raises(ConformanceError, match=r"^token_limits: headers: HTTP 429 on call 1 without x-ratelimit-limit"):
        assert_token_limits_conformance(fake(bare), model="m", messages=HI)


def test_a_context_overflow_is_named_by_its_code() -> None:
    error = {"error": {"message": "This model's maximum context length is 16 tokens.", "type": "invalid_request_error",
                       "param": "messages", "code": "context_length_exceeded"}}  # fmt: skip
    with pytest.raises(ConformanceError) as caught:
        assert_token_limits_conformance(fake(httpx.Response(400, json=error)), model="m", messages=HI)
    assert str(caught.value) == (
        "token_limits: messages: HTTP 400 on call 1 (code 'context_length_exceeded'): "
        "This model's maximum context length is 16 tokens."
    )
    assert caught.value.status == 400


@pytest.mark.parametrize("calls", [0, 101, True, "2"])
def test_calls_must_be_a_small_count(calls: Any) -> None:
    with pytest.raises(TypeError, match="calls must be an integer from 1 to 100"):
        assert_token_limits_conformance(fake(), model="m", calls=calls)
