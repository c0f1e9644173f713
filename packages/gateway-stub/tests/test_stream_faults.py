"""Transport behaviours over real HTTP: ``cut-<n>``, ``drop-<n>`` and ``garble-<n>`` on chat, legacy
completions and the Responses API, streamed and not, as httpx and the openai SDK see them.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import orjson
import pytest

from evaljig_gateway import Gateway, judge

from .conftest import openai_client

ASK = "What is the capital of France?"
#: (path, body) per endpoint; the ``model`` is filled in per test.
ENDPOINTS: dict[str, tuple[str, dict[str, Any]]] = {
    "chat": ("/v1/chat/completions", {"messages": [{"role": "user", "content": ASK}]}),
    "completions": ("/v1/completions", {"prompt": ASK, "max_tokens": 32}),
    "responses": ("/v1/responses", {"input": ASK}),
}
#: The last chunk a whole stream sends, per endpoint.
LAST = {"chat": "data: [DONE]", "completions": "data: [DONE]", "responses": "event: response.completed"}


def _chunks(http: httpx.Client, endpoint: str, model: str) -> tuple[list[str], Exception | None]:
    """The SSE events (blank-line separated) of a streamed request, and the transport error that ended it, if any."""
    path, body = ENDPOINTS[endpoint]
    text, error = "", None
    with http.stream("POST", path, json={**body, "model": model, "stream": True}) as reply:
        assert reply.status_code == 200
        try:
            for piece in reply.iter_text():
                text += piece
        except httpx.TransportError as exc:
            error = exc
    return [event for event in text.split("\n\n") if event], error


def _whole(http: httpx.Client, endpoint: str, model: str) -> httpx.Response:
    path, body = ENDPOINTS[endpoint]
    return http.post(path, json={**body, "model": model})


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_plain_streams_end_with_their_last_chunk(http: httpx.Client, endpoint: str) -> None:
    """The baseline the faults break: a whole stream, ended by ``[DONE]`` or ``response.completed``."""
    events, error = _chunks(http, endpoint, "gpt-stub")
    assert error is None
    assert events[-1].startswith(LAST[endpoint])
    assert len(events) >= 3  # completions sends its text in one chunk, then the finish, then [DONE]


# -- cut-<n> -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_cut_ends_the_stream_cleanly_after_n_chunks(http: httpx.Client, gateway: Gateway, endpoint: str) -> None:
    whole, _ = _chunks(http, endpoint, "gpt-stub-cut-1000")  # more than it has: all but its last
    assert len(whole) >= 2
    assert not whole[-1].startswith(LAST[endpoint])
    gateway.reset()
    events, error = _chunks(http, endpoint, "gpt-stub-cut-2")
    assert error is None  # a clean end: nothing tells the client it was cut
    assert len(events) == 2
    assert [e.split(":")[0] for e in events] == [e.split(":")[0] for e in whole[:2]]
    [call] = gateway.calls()
    assert call.status == 200
    assert call.cut


def test_the_openai_sdk_takes_a_cut_chat_stream_as_complete(client: openai.OpenAI, gateway: Gateway) -> None:
    """What makes it lie: no error, a shorter answer."""
    full = client.chat.completions.create(model="gpt-stub", messages=[{"role": "user", "content": ASK}])
    chunks = list(
        client.chat.completions.create(model="cut-3", messages=[{"role": "user", "content": ASK}], stream=True)
    )
    assert len(chunks) == 3
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert full.choices[0].message.content
    assert full.choices[0].message.content.startswith(text)
    assert text != full.choices[0].message.content
    assert [c.cut for c in gateway.calls(model="cut-3")] == [True]


def test_a_cut_responses_stream_never_completes(client: openai.OpenAI) -> None:
    events = list(client.responses.create(model="cut-5", input=ASK, stream=True))
    assert len(events) == 5
    assert "response.completed" not in [e.type for e in events]


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_cut_not_streamed_answers_the_first_n_bytes(http: httpx.Client, gateway: Gateway, endpoint: str) -> None:
    reply = _whole(http, endpoint, "cut-40")
    assert reply.status_code == 200
    assert reply.headers["content-length"] == "40"
    assert len(reply.content) == 40
    assert reply.content.startswith(b'{"id":"')
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(reply.content)
    [call] = gateway.calls()
    assert call.cut


def test_cut_combines_with_fail_once(client: openai.OpenAI, gateway: Gateway) -> None:
    """The SDK retries the 500, then takes the cut stream: two calls, the second cut."""
    chunks = list(
        client.chat.completions.create(
            model="fail-once-cut-2", messages=[{"role": "user", "content": ASK}], stream=True
        )
    )
    assert len(chunks) == 2
    assert [(c.status, c.cut) for c in gateway.calls()] == [(500, False), (200, True)]


# -- drop-<n> ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_drop_closes_the_connection_after_n_chunks(http: httpx.Client, gateway: Gateway, endpoint: str) -> None:
    events, error = _chunks(http, endpoint, "drop-2")
    assert isinstance(error, httpx.RemoteProtocolError)
    assert "incomplete chunked read" in str(error)
    assert len(events) == 2
    [call] = gateway.calls()
    assert call.status == 200
    assert call.cut


def test_the_openai_sdk_raises_on_a_dropped_stream(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(model="drop-2", messages=[{"role": "user", "content": ASK}], stream=True)
    with pytest.raises(httpx.RemoteProtocolError):
        list(stream)


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_drop_not_streamed_is_a_connection_error(gateway: Gateway, endpoint: str) -> None:
    impatient = openai_client(gateway.base_url, api_key="sk-evaljig-test", max_retries=0)
    calls: dict[str, Any] = {
        "chat": lambda: impatient.chat.completions.create(model="drop-30", messages=[{"role": "user", "content": ASK}]),
        "completions": lambda: impatient.completions.create(model="drop-30", prompt=ASK),
        "responses": lambda: impatient.responses.create(model="drop-30", input=ASK),
    }
    with pytest.raises(openai.APIConnectionError):
        calls[endpoint]()
    assert [(c.status, c.cut) for c in gateway.calls()] == [(200, True)]


def test_drop_not_streamed_sends_the_first_n_bytes(gateway: Gateway) -> None:
    with (
        httpx.Client(base_url=gateway.url) as http,
        http.stream(
            "POST", "/v1/chat/completions", json={"model": "drop-25", "messages": [{"role": "user", "content": ASK}]}
        ) as reply,
    ):
        got: list[bytes] = []
        with pytest.raises(httpx.RemoteProtocolError):
            got.extend(reply.iter_bytes())
    assert len(b"".join(got)) == 25
    assert b"".join(got).startswith(b'{"id":"chatcmpl-')


# -- garble-<n> --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_garble_makes_chunk_n_not_json(http: httpx.Client, gateway: Gateway, endpoint: str) -> None:
    events, error = _chunks(http, endpoint, "garble-2")
    assert error is None
    assert events[1].split("\n")[-1] == "data: {garbage"
    for i, event in enumerate(events[:-1]):
        if i != 1:
            assert json.loads(event.split("data: ", 1)[1])  # every other chunk still parses
    assert events[-1].startswith(LAST[endpoint])
    [call] = gateway.calls()
    assert not call.cut  # whole, though corrupt


def test_garble_past_the_stream_changes_nothing(http: httpx.Client) -> None:
    events, _ = _chunks(http, "chat", "garble-100000")
    assert "{garbage" not in "".join(events)


def test_the_openai_sdk_fails_on_a_garbled_chunk(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(model="garble-2", messages=[{"role": "user", "content": ASK}], stream=True)
    with pytest.raises(json.JSONDecodeError):
        list(stream)
    with pytest.raises(json.JSONDecodeError):
        list(client.responses.create(model="garble-2", input=ASK, stream=True))


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_garble_not_streamed(http: httpx.Client, endpoint: str) -> None:
    reply = _whole(http, endpoint, "garble-20")
    assert reply.status_code == 200
    assert reply.content[20:] == b"{garbage"
    assert reply.content.startswith(b'{"id":"')
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(reply.content)


# -- the verdict on a client that meets them ---------------------------------------------------------------


def test_the_verdict_finds_a_client_that_takes_a_cut_stream_as_complete(
    client: openai.OpenAI, gateway: Gateway
) -> None:
    """The openai SDK returns a cut stream without an error; a loop that moves on is found, naming both calls."""
    for question in ("First question?", "Second question?"):
        list(
            client.chat.completions.create(model="cut-3", messages=[{"role": "user", "content": question}], stream=True)
        )
    verdict = judge(gateway)
    assert [f.check for f in verdict.findings] == ["truncated_stream_accepted"]
    assert [c.seq for c in verdict.findings[0].calls] == [1, 2]


@pytest.mark.evaljig_cassette("cassettes/multiple_choice.yaml")
def test_a_replayed_answer_is_cut_like_a_synthetic_one(gateway: Gateway) -> None:
    """Transport behaviours wrap a recording too: ``cut-30-gpt-x`` replays ``gpt-x``'s answer, cut at 30 bytes."""
    content = "Which planet is largest?\nA. one\nB. two\nC. three\nD. four"
    with httpx.Client(base_url=gateway.url) as http:
        reply = http.post(
            "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": content}], "model": "cut-30-gpt-x", "temperature": 0},
        )
    assert reply.status_code == 200
    assert reply.content.startswith(b'{"id":"chatcmpl-')
    assert len(reply.content) == 30
    assert [(c.status, c.cut) for c in gateway.calls()] == [(200, True)]
