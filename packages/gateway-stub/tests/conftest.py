from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from evaljig_gateway import Gateway

FAKE_KEY = "sk-evaljig-test"  # never a real credential: the gateway ignores keys

#: Clients :func:`openai_client` made during the current test; closed in its teardown.
_OPEN_CLIENTS: list[openai.OpenAI] = []


def openai_client(base_url: str, **options: Any) -> openai.OpenAI:
    """The real OpenAI SDK at ``base_url`` (key ``FAKE_KEY`` unless given), closed when the test ends.

    An OpenAI client sits in a reference cycle (its resources point back at it), so one left open
    is freed by a later garbage collection: its socket's unclosed ``ResourceWarning`` then fails
    whichever test happens to be running, under the ``error`` filter.
    """
    made = openai.OpenAI(base_url=base_url, **{"api_key": FAKE_KEY, **options})
    _OPEN_CLIENTS.append(made)
    return made


@pytest.fixture(autouse=True)
def _close_openai_clients() -> Iterator[None]:
    yield
    while _OPEN_CLIENTS:
        _OPEN_CLIENTS.pop().close()


@pytest.fixture
def client(gateway: Gateway) -> openai.OpenAI:
    """The real OpenAI SDK pointed at the gateway, with its default retry policy (2 retries)."""
    return openai_client(gateway.base_url)


@pytest.fixture
def http(gateway: Gateway) -> httpx.Client:
    with httpx.Client(base_url=gateway.url, timeout=10) as c:
        yield c


CHAT = {"model": "gpt-stub", "messages": [{"role": "user", "content": "What is the capital of France?"}]}
