"""Details real servers send: ``x-request-id``, ``usage.*_tokens_details``, OpenAI's 429 body."""

from __future__ import annotations

import httpx
import openai
import pytest

from evaljig_gateway import Gateway

from .conftest import CHAT, openai_client

REQUESTS = [
    ("POST", "/v1/chat/completions", CHAT),
    ("POST", "/v1/completions", {"model": "gpt-stub", "prompt": "hi"}),
    ("POST", "/v1/embeddings", {"model": "e", "input": "hi"}),
    ("POST", "/v1/responses", {"model": "gpt-stub", "input": "hi"}),
    ("GET", "/v1/models", None),
    ("POST", "/v1/chat/completions", {"model": "gpt-stub"}),  # a 400
    ("POST", "/v1/chat/completions", {**CHAT, "model": "rate-limit"}),  # a 429
]


def test_every_api_answer_has_a_request_id_counting_from_the_reset(http: httpx.Client) -> None:
    ids = [http.request(method, path, json=body).headers.get("x-request-id") for method, path, body in REQUESTS]
    assert ids == [f"req_{n:032x}" for n in range(1, len(REQUESTS) + 1)]


def test_request_ids_start_again_after_a_reset(gateway: Gateway, http: httpx.Client) -> None:
    first = http.post("/v1/chat/completions", json=CHAT).headers["x-request-id"]
    gateway.reset()
    assert http.post("/v1/chat/completions", json=CHAT).headers["x-request-id"] == first


def test_the_sdk_reads_the_request_id(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(model="gpt-stub", messages=CHAT["messages"])
    assert completion._request_id == "req_" + "0" * 31 + "1"


@pytest.mark.parametrize(
    ("path", "body"),
    [("/v1/chat/completions", CHAT), ("/v1/completions", {"model": "gpt-stub", "prompt": "hi", "max_tokens": 2})],
)
def test_usage_has_token_details(http: httpx.Client, path: str, body: dict[str, object]) -> None:
    usage = http.post(path, json=body).json()["usage"]
    assert usage["prompt_tokens_details"] == {"cached_tokens": 0, "audio_tokens": 0}
    assert usage["completion_tokens_details"]["reasoning_tokens"] == 0


def test_the_sdk_parses_usage_details(client: openai.OpenAI) -> None:
    usage = client.chat.completions.create(model="gpt-stub", messages=CHAT["messages"]).usage
    assert usage is not None
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 0
    assert usage.completion_tokens_details is not None
    assert usage.completion_tokens_details.reasoning_tokens == 0


def test_a_429_has_openais_body(gateway: Gateway) -> None:
    impatient = openai_client(gateway.base_url, max_retries=0)
    with pytest.raises(openai.RateLimitError) as caught:
        impatient.chat.completions.create(model="rate-limit", messages=CHAT["messages"])
    error = caught.value.body
    assert isinstance(error, dict)
    assert (error["type"], error["param"], error["code"]) == ("requests", None, "rate_limit_exceeded")
    assert error["message"].startswith("Rate limit reached for rate-limit in organization ")
    assert "on requests per min (RPM)" in error["message"]
    assert caught.value.request_id == "req_" + "0" * 31 + "1"
