"""``LiteLLMCaller`` against the live gateway: the retry budget is exact (SDK retries off)."""

from __future__ import annotations

import pytest

from evaljig_config import LiteLLMCaller, ProviderSpec, RetryBudgetExhausted
from evaljig_gateway import Gateway

from .placeholders import FAKE_KEY

MESSAGES = [{"role": "user", "content": "What is 2 + 2?"}]


def _caller(spec: ProviderSpec, gateway: Gateway, model: str, sleeps: list[float]) -> LiteLLMCaller:
    return LiteLLMCaller(spec.with_base_url(gateway.base_url).with_model(f"openai/{model}"), sleep=sleeps.append)


def test_kwargs_carry_the_spec(spec: ProviderSpec) -> None:
    kwargs = LiteLLMCaller(spec).completion_kwargs(MESSAGES)
    assert kwargs == {
        "model": "openai/gpt-stub", "messages": MESSAGES, "base_url": spec.base_url, "api_key": FAKE_KEY,
        "timeout": 30.0, "max_retries": 0, "temperature": 0.0, "seed": 0, "max_tokens": 8,
    }  # fmt: skip


def test_success_is_one_call(spec: ProviderSpec, gateway: Gateway) -> None:
    sleeps: list[float] = []
    reply = _caller(spec, gateway, "gpt-stub", sleeps).complete(MESSAGES)
    assert reply.choices[0].message.content
    assert len(gateway.calls()) == 1
    assert sleeps == []


def test_fail_once_costs_exactly_two_calls(spec: ProviderSpec, gateway: Gateway) -> None:
    sleeps: list[float] = []
    _caller(spec, gateway, "fail-once", sleeps).complete(MESSAGES)
    assert [c.status for c in gateway.calls()] == [500, 200]
    assert sleeps == [0.01]


def test_budget_exhausted_names_model_attempts_and_error(spec: ProviderSpec, gateway: Gateway) -> None:
    sleeps: list[float] = []
    with pytest.raises(RetryBudgetExhausted) as caught:
        _caller(spec, gateway, "always-fail", sleeps).complete(MESSAGES)
    error = caught.value
    assert (error.model, error.attempts) == ("openai/always-fail", 3)
    assert "InternalServerError" in error.last_error
    assert "fails call 3" in error.last_error
    # budget of 3 attempts x SDK retries 0 = exactly 3 HTTP calls
    assert [c.status for c in gateway.calls()] == [500, 500, 500]
    assert sleeps == [0.01, 0.01]


def test_bad_request_is_raised_without_retrying(spec: ProviderSpec, gateway: Gateway) -> None:
    import litellm

    with pytest.raises(litellm.BadRequestError, match="rejects every request"):
        _caller(spec, gateway, "bad-request", []).complete(MESSAGES)
    assert len(gateway.calls()) == 1
