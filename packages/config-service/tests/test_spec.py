from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaljig_config import ConfigError, ProviderSpec, load_provider_spec, parse_provider_spec

VALID = {
    "name": "fake-openai",
    "base_url": "http://127.0.0.1:8000/v1/",
    "model": "openai/gpt-stub",
    "api_key_env": "EVALJIG_FAKE_API_KEY",
    "generation": {"temperature": 0.0, "max_new_tokens": 8, "seed": 0},
    "retry": {"attempts": 2, "sleep": 0.01, "multiplier": 1.0},
    "timeout": 30,
    "concurrency": 1,
}


def test_valid_spec_normalises_the_base_url() -> None:
    spec = parse_provider_spec(VALID)
    assert spec.base_url == "http://127.0.0.1:8000/v1"
    assert spec.served_model == "gpt-stub"


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".yml"])
def test_loads_json_and_yaml(tmp_path: Path, suffix: str) -> None:
    import yaml

    path = tmp_path / f"spec{suffix}"
    path.write_text(json.dumps(VALID) if suffix == ".json" else yaml.safe_dump(VALID))
    assert load_provider_spec(path) == parse_provider_spec(VALID)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"api_key": "sk-live-123"}, "field '(spec)': a literal 'api_key' is not allowed"),
        ({"model": "gpt-stub"}, "field '(spec)': model 'gpt-stub' needs the 'openai/' prefix"),
        ({"colour": "blue"}, "field 'colour': Extra inputs are not permitted"),
        ({"api_key_env": "not a var"}, "field 'api_key_env': must be an environment variable name"),
        ({"base_url": "ftp://x"}, "field 'base_url': must be an http:// or https:// URL"),
        ({"retry": {"attempts": 0}}, "field 'retry.attempts': Input should be greater than or equal to 1"),
        ({"generation": {"temprature": 1}}, "field 'generation.temprature': Extra inputs are not permitted"),
    ],
)
def test_errors_name_file_field_and_reason(tmp_path: Path, change: dict[str, object], message: str) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({**VALID, **change}))
    with pytest.raises(ConfigError) as caught:
        load_provider_spec(path)
    assert f"{path}: {message}" in str(caught.value)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("spec.json", "{broken", "not valid JSON"),
        ("spec.yaml", "a: [", "not valid YAML"),
        ("spec.yaml", "- a list", "expected a mapping"),
        ("spec.toml", "x = 1", "must be .json, .yaml or .yml"),
    ],
)
def test_unreadable_files(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_provider_spec(path)


def test_api_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = parse_provider_spec(VALID)
    monkeypatch.delenv("EVALJIG_FAKE_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="EVALJIG_FAKE_API_KEY is not set"):
        spec.api_key()
    monkeypatch.setenv("EVALJIG_FAKE_API_KEY", "sk-test")
    assert spec.api_key() == "sk-test"


def test_with_base_url_revalidates() -> None:
    spec = parse_provider_spec(VALID)
    assert spec.with_base_url("http://127.0.0.1:9/v1").base_url == "http://127.0.0.1:9/v1"
    with pytest.raises(ConfigError, match=r"fake-openai \(base_url override\): field 'base_url': must be an http"):
        spec.with_base_url("nope")
    with pytest.raises(ConfigError, match=r"fake-openai \(model override\): field '\(spec\)': model 'gpt-4' needs"):
        spec.with_model("gpt-4")


def test_spec_is_frozen() -> None:
    spec: ProviderSpec = parse_provider_spec(VALID)
    with pytest.raises(ValueError, match="frozen"):
        spec.name = "x"  # type: ignore[misc]
