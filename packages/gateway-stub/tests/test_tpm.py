"""``tpm-<n>`` over real HTTP: OpenAI's tokens-per-minute 429 once N tokens are spent, on every endpoint,
streamed and not; the window ends on ``reset`` or ``advance``, never on the wall clock."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from evaljig_gateway import Gateway

from .conftest import openai_client

ASK = [{"role": "user", "content": "What is the capital of France?"}]


def _chat(http: httpx.Client, model: str, **extra: Any) -> httpx.Response:
    return http.post("/v1/chat/completions", json={"model": model, "messages": ASK, **extra})


def test_tokens_are_spent_until_the_limit_then_429(http: httpx.Client, gateway: Gateway) -> None:
    first = _chat(http, "tpm-30")
    assert first.status_code == 200
    spent = first.json()["usage"]["total_tokens"]
    assert spent < 30  # under the limit: the next call is answered too
    second = _chat(http, "tpm-30")
    assert second.status_code == 200
    spent += second.json()["usage"]["total_tokens"]
    assert spent >= 30
    refused = _chat(http, "tpm-30")
    assert refused.status_code == 429
    assert refused.json() == {
        "error": {
            "message": f"Rate limit reached for tpm-30 in organization org-evaljig on tokens per min (TPM): "
            f"Limit 30, Used {spent}, Requested {first.json()['usage']['total_tokens']}. Please try again in 1ms. "
            "Visit https://platform.openai.com/account/rate-limits to learn more.",
            "type": "tokens",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
    headers = refused.headers
    assert headers["x-ratelimit-limit-tokens"] == "30"
    assert headers["x-ratelimit-remaining-tokens"] == "0"
    assert headers["x-ratelimit-reset-tokens"] == "1ms"
    assert headers["retry-after"] == "1"
    assert headers["retry-after-ms"] == "1"
    assert [c.status for c in gateway.calls()] == [200, 200, 429]
    assert gateway.calls()[-1].retry_after_ms == 1


def test_the_window_ends_on_advance_and_on_reset(http: httpx.Client, gateway: Gateway) -> None:
    assert _chat(http, "tpm-1").status_code == 200
    assert _chat(http, "tpm-1").status_code == 429
    assert http.post("/_gateway/advance").json() == {"advanced": True}
    assert _chat(http, "tpm-1").status_code == 200
    assert _chat(http, "tpm-1").status_code == 429
    gateway.advance()
    assert _chat(http, "tpm-1").status_code == 200
    assert _chat(http, "tpm-1").status_code == 429
    http.post("/_gateway/reset")
    assert _chat(http, "tpm-1").status_code == 200
    assert _chat(http, "tpm-1").status_code == 429
    gateway.reset()
    assert _chat(http, "tpm-1").status_code == 200


def test_each_model_name_has_its_own_window(http: httpx.Client) -> None:
    assert _chat(http, "a-tpm-1").status_code == 200
    assert _chat(http, "a-tpm-1").status_code == 429
    assert _chat(http, "b-tpm-1").status_code == 200
    assert _chat(http, "gpt-stub").status_code == 200


def test_streamed_replies_spend_their_tokens_too(http: httpx.Client) -> None:
    with http.stream("POST", "/v1/chat/completions", json={"model": "tpm-1", "messages": ASK, "stream": True}) as r:
        assert r.status_code == 200
        assert "[DONE]" in r.read().decode()
    assert _chat(http, "tpm-1", stream=True).status_code == 429


def test_the_openai_sdk_raises_rate_limit_error(gateway: Gateway) -> None:
    client = openai_client(gateway.base_url, api_key="sk-evaljig-test", max_retries=0)
    client.chat.completions.create(model="tpm-1", messages=ASK)  # type: ignore[arg-type]
    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(model="tpm-1", messages=ASK, stream=True)  # type: ignore[arg-type]
    assert caught.value.code == "rate_limit_exceeded"
    assert "tokens per min (TPM)" in caught.value.message


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_completions_and_responses(client: openai.OpenAI, stream: bool) -> None:
    impatient = client.with_options(max_retries=0)
    impatient.completions.create(model="tpm-5", prompt="Say hi", stream=stream)
    with pytest.raises(openai.RateLimitError):
        impatient.completions.create(model="tpm-5", prompt="Say hi", stream=stream)
    impatient.responses.create(model="Tpm-5", input="Say hi", stream=stream)
    with pytest.raises(openai.RateLimitError):
        impatient.responses.create(model="Tpm-5", input="Say hi", stream=stream)


def test_a_failed_call_spends_nothing(http: httpx.Client, gateway: Gateway) -> None:
    """fail-once's 500 comes first and costs no tokens; the 429 only after a success."""
    assert _chat(http, "fail-once-tpm-1").status_code == 500
    assert _chat(http, "fail-once-tpm-1").status_code == 200
    assert _chat(http, "fail-once-tpm-1").status_code == 429
    assert [c.status for c in gateway.calls()] == [500, 200, 429]
