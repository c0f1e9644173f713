from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import openai
import pytest

from evaljig_gateway import Gateway
from evaljig_gateway._token_ids import vocabulary_bytes

if TYPE_CHECKING:
    import tiktoken

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


@functools.cache
def gpt2() -> tiktoken.Encoding:
    """GPT-2's encoder (tiktoken) over the gateway's own vocabulary: the ids a client sends as token-id prompts."""
    import tiktoken
    from tiktoken_ext.openai_public import r50k_pat_str

    ranks = {token: rank for rank, token in enumerate(vocabulary_bytes())}
    return tiktoken.Encoding("gpt2-ranks", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens={})
