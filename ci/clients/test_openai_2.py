"""The openai SDK 2.x (on httpx, as litellm 1.106 and lighteval's stack run it): the failure cells."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from . import openai_failures
from .conftest import client
from .failures import cells

#: What openai 2.x (on httpx) does with each gateway failure.
EXPECTED = {
    "reasoning": (
        "create: returns content 'Paris', finish_reason stop, reasoning kept",
        "stream: returns content 'Paris', finish_reason stop, reasoning kept",
        "2 requests",
    ),
    "think-empty": (
        "create: returns content '', finish_reason stop, reasoning kept",
        "stream: returns content '', finish_reason stop, reasoning kept",
        "2 requests",
    ),
    "length": (
        "create: returns content '', finish_reason length",
        "stream: returns content '', finish_reason length",
        "2 requests",
    ),
    "cut": (
        "create: raises json.JSONDecodeError",
        "stream: returns content 'D', finish_reason None",
        "2 requests",
    ),
    "drop": (
        "create: raises openai.APIConnectionError",
        "stream: raises httpx.RemoteProtocolError",
        "4 requests",
    ),
    "garble": (
        "create: raises json.JSONDecodeError",
        "stream: raises json.JSONDecodeError",
        "2 requests",
    ),
    "context": (
        "create: raises openai.BadRequestError",
        "stream: raises openai.BadRequestError",
        "2 requests",
    ),
    "tpm": (
        "call 6 raises openai.RateLimitError",
        "8 requests",
    ),
    "bad-tool-args": (
        'create: returns content null, finish_reason tool_calls, tool get_weather({"city")',
        "stream: returns content '', finish_reason tool_calls, tool get_weather({\"city\")",
        "2 requests",
    ),
    "unknown-tool": (
        'create: returns content null, finish_reason tool_calls, tool evaljig_unknown_tool({"city":"mike"})',
        'stream: returns content \'\', finish_reason tool_calls, tool evaljig_unknown_tool({"city":"mike"})',
        "2 requests",
    ),
}


@pytest.fixture
def sdk() -> Any:
    return client("openai")


@pytest.mark.parametrize(("failure", "expected"), cells("openai-2", EXPECTED))
def test_failure(sdk: Any, failure: str, expected: tuple[str, ...], seen: Callable[[str], None]) -> None:
    """What the SDK raises or returns for each gateway failure (ci/clients/openai_failures.py)."""
    parts = openai_failures.observe(sdk, failure)
    seen("; ".join(parts))
    assert parts == expected
