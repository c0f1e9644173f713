from __future__ import annotations

import httpx
import openai
import pytest

from evaljig_gateway import Gateway

FAKE_KEY = "sk-evaljig-test"  # never a real credential: the gateway ignores keys


@pytest.fixture
def client(gateway: Gateway) -> openai.OpenAI:
    """The real OpenAI SDK pointed at the gateway, with its default retry policy (2 retries)."""
    return openai.OpenAI(base_url=gateway.base_url, api_key=FAKE_KEY)


@pytest.fixture
def http(gateway: Gateway) -> httpx.Client:
    with httpx.Client(base_url=gateway.url, timeout=10) as c:
        yield c


CHAT = {"model": "gpt-stub", "messages": [{"role": "user", "content": "What is the capital of France?"}]}
