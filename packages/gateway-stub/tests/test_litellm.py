"""The gateway as the real ``litellm`` sees it (OpenAI-compatible base URL + key)."""

from __future__ import annotations

import litellm
import pytest

from evaljig_gateway import Gateway

from .conftest import FAKE_KEY

MESSAGES = [{"role": "user", "content": "Name a prime number."}]


def test_litellm_completion(gateway: Gateway) -> None:
    reply = litellm.completion(model="openai/gpt-stub", messages=MESSAGES, api_base=gateway.base_url, api_key=FAKE_KEY)
    assert reply.choices[0].message.content  # type: ignore[union-attr]
    assert reply.usage.total_tokens > 0  # type: ignore[attr-defined]
    [call] = gateway.calls()
    assert call.model == "gpt-stub"  # litellm strips the provider prefix


def test_litellm_fail_once_retried_by_the_openai_sdk_inside(gateway: Gateway) -> None:
    reply = litellm.completion(model="openai/fail-once", messages=MESSAGES, api_base=gateway.base_url, api_key=FAKE_KEY)
    assert reply.choices[0].message.content  # type: ignore[union-attr]
    assert [c.status for c in gateway.calls(model="fail-once")] == [500, 200]


def test_litellm_always_fail_raises(gateway: Gateway) -> None:
    with pytest.raises(litellm.InternalServerError):
        litellm.completion(model="openai/always-fail", messages=MESSAGES, api_base=gateway.base_url, api_key=FAKE_KEY)
    assert all(c.status == 500 for c in gateway.calls(model="always-fail"))


def test_litellm_streaming(gateway: Gateway) -> None:
    chunks = list(
        litellm.completion(
            model="openai/gpt-stub", messages=MESSAGES, api_base=gateway.base_url, api_key=FAKE_KEY, stream=True
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks)  # type: ignore[union-attr]
    plain = litellm.completion(model="openai/gpt-stub", messages=MESSAGES, api_base=gateway.base_url, api_key=FAKE_KEY)
    assert text == plain.choices[0].message.content  # type: ignore[union-attr]


def test_litellm_embedding(gateway: Gateway) -> None:
    reply = litellm.embedding(
        model="openai/text-embedding-3-stub",
        input=["hello"],
        api_base=gateway.base_url,
        api_key=FAKE_KEY,
        dimensions=16,
    )
    assert len(reply.data[0]["embedding"]) == 16
