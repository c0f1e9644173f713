"""Builder ``providers``: the fake-openai provider spec tests point at their gateway."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaljig_common import CANONICAL_BASE_URL
from evaljig_config import ConfigError, parse_provider_spec
from evaljig_fixtures._datasets.manifest import canonical_json
from evaljig_fixtures._errors import BuildError
from evaljig_fixtures._regen.builder import Builder, write_output
from evaljig_fixtures._regen.context import BuildContext

FAKE_OPENAI = "providers/fake-openai.json"
PLACEHOLDER_BASE_URL = CANONICAL_BASE_URL
"""Tests rewrite it with ``spec.with_base_url(gateway.base_url)``; nothing listens here."""


def fake_openai_spec() -> dict[str, Any]:
    """The spec in the config service's format, keys in the README's order."""
    return {
        "name": "fake-openai",
        "base_url": PLACEHOLDER_BASE_URL,
        "model": "openai/gpt-stub",
        "api_key_env": "EVALJIG_FAKE_API_KEY",
        "generation": {"temperature": 0.0, "max_new_tokens": 8, "seed": 0},
        "retry": {"attempts": 3, "sleep": 0.01, "multiplier": 1.0},
        "timeout": 30.0,
        "concurrency": 1,
    }


def build_providers(out_dir: Path, ctx: BuildContext) -> list[Path]:
    spec = fake_openai_spec()
    try:
        parse_provider_spec(spec, source=FAKE_OPENAI)
    except ConfigError as exc:
        raise BuildError(f"builder providers: the spec evaljig_config would reject:\n{exc}") from exc
    return [write_output(out_dir, FAKE_OPENAI, canonical_json(spec))]


PROVIDERS = Builder(
    name="providers",
    outputs=(FAKE_OPENAI,),
    build=build_providers,
    description="provider spec for the local gateway, validated by evaljig_config",
)
