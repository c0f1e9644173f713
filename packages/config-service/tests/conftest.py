from __future__ import annotations

import pytest

from evaljig_config import ProviderSpec, parse_provider_spec

FAKE_KEY_ENV = "EVALJIG_FAKE_API_KEY"
FAKE_KEY = "sk-evaljig-fake-0000"  # a placeholder, never a real credential

SPEC = {
    "name": "fake-openai",
    "base_url": "http://127.0.0.1:8000/v1",
    "model": "openai/gpt-stub",
    "api_key_env": FAKE_KEY_ENV,
    "generation": {"temperature": 0.0, "max_new_tokens": 8, "seed": 0},
    "retry": {"attempts": 3, "sleep": 0.01, "multiplier": 1.0},
    "timeout": 30,
    "concurrency": 1,
}


@pytest.fixture
def spec(monkeypatch: pytest.MonkeyPatch) -> ProviderSpec:
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_KEY)
    return parse_provider_spec(SPEC)
