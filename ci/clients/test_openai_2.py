"""The openai SDK 2.x (on httpx, as litellm 1.106 and lighteval's stack run it): the failure cells."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from . import openai_failures
from .conftest import client
from .failures import cells


@pytest.fixture
def sdk() -> Any:
    return client("openai")


@pytest.mark.parametrize(("failure", "expected"), cells("openai-2", openai_failures.EXPECTED_2))
def test_failure(sdk: Any, failure: str, expected: tuple[str, ...], seen: Callable[[str], None]) -> None:
    """What the SDK raises or returns for each gateway failure (ci/clients/openai_failures.py)."""
    parts = openai_failures.observe(sdk, failure)
    seen("; ".join(parts))
    assert parts == expected
