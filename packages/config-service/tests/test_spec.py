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


SECRET = "sk-live-do-not-echo-1234"


@pytest.mark.parametrize(
    ("base_url", "reason"),
    [
        (f"http://user:{SECRET}@127.0.0.1:8000/v1", "must not carry credentials (user:password@host)"),
        (f"http://{SECRET}@127.0.0.1:8000/v1", "must not carry credentials (user:password@host)"),
        (f"http://127.0.0.1:8000/v1?api_key={SECRET}", "must not carry credentials (query parameter api_key)"),
        (f"https://host/v1?x=1&Key={SECRET}", "must not carry credentials (query parameter Key)"),
        (f"https://host/v1?access-token={SECRET}", "must not carry credentials (query parameter access-token)"),
        (f"https://host/v1?api%5Fkey={SECRET}", "must not carry credentials (query parameter api_key)"),
        (f"https://host/v1?token={SECRET}", "must not carry credentials (query parameter token)"),
    ],
)
def test_base_url_with_credentials_is_refused_without_echoing_them(
    tmp_path: Path, base_url: str, reason: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({**VALID, "base_url": base_url}))
    with pytest.raises(ConfigError) as caught:
        load_provider_spec(path)
    hint = "name the key's environment variable in 'api_key_env'"
    assert str(caught.value) == f"{path}: field 'base_url': {reason}; {hint}"
    with pytest.raises(ConfigError) as override:
        parse_provider_spec(VALID).with_base_url(base_url)
    for error in (caught.value, override.value):
        assert SECRET not in repr(error)
        assert error.__cause__ is None
        assert error.__context__ is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"base_url": "http://127.0.0.1:8000/v 1"}, "field 'base_url': must not contain spaces or control characters"),
        ({"base_url": "http://127.0.0.1:99999/v1"}, "field 'base_url': is not a valid URL"),
        ({"model": "openai/gpt\x00stub"}, "field 'model': must be printable, without NUL, newline"),
        ({"model": "openai/gpt\nstub"}, "field 'model': must be printable, without NUL, newline"),
        ({"concurrency": True}, "field 'concurrency': Input should be a valid integer"),
        ({"concurrency": "3"}, "field 'concurrency': Input should be a valid integer"),
        ({"timeout": "30"}, "field 'timeout': Input should be a valid number"),
        ({"retry": {"attempts": "3"}}, "field 'retry.attempts': Input should be a valid integer"),
        ({"generation": {"temperature": False}}, "field 'generation.temperature': Input should be a valid number"),
        ({"max_model_length": 10**12}, "field 'max_model_length': Input should be less than or equal to 10000000"),
    ],
)
def test_hostile_values_name_file_field_and_reason(tmp_path: Path, change: dict[str, object], message: str) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({**VALID, **change}))
    with pytest.raises(ConfigError) as caught:
        load_provider_spec(path)
    assert f"{path}: {message}" in str(caught.value)


def test_integer_fields_still_take_floats_where_numbers_are_meant() -> None:
    spec = parse_provider_spec({**VALID, "timeout": 30, "retry": {"attempts": 2, "sleep": 1, "multiplier": 2}})
    assert (spec.timeout, spec.retry.sleep) == (30.0, 1.0)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("spec.json", '{"name": "a", "name": "b"}', "field 'name': duplicate key; give each key once"),
        ("spec.json", '{"retry": {"attempts": 1, "attempts": 2}}', "field 'attempts': duplicate key"),
        ("spec.yaml", "name: a\nmodel: x\nname: b\n", "field 'name': duplicate key (line 3); give each key once"),
        ("spec.yml", "retry:\n  sleep: 1.0\n  sleep: 2.0\n", "field 'sleep': duplicate key (line 3)"),
        ("spec.json", "[" * 100_000 + "]" * 100_000, "not valid JSON: nested deeper than 100 levels"),
        ("spec.yaml", "[" * 100_000 + "]" * 100_000, "not valid YAML: nested deeper than 100 levels at line 1"),
        (
            "spec.yaml",
            'generation: {stop_tokens: [&s "' + "x" * 1000 + '", ' + ", ".join(["*s"] * 20_000) + "]}\n",
            "not valid YAML: anchors and aliases are not allowed in a provider spec",
        ),
        ("spec.json", '{"concurrency": 1' + "0" * 5000 + "}", "not valid JSON: integer with 5001 digits"),
        ("spec.yaml", "concurrency: 1" + "0" * 5000 + "\n", "is not a valid int: Exceeds the limit (4300 digits)"),
        ("spec.json", b"\xff\xfe{}", "not UTF-8 text (byte 0)"),
        ("spec.yaml", "name: !!bool maybe\n", "not valid YAML: the value 'maybe' is not a valid bool at line 1"),
        ("spec.json", " " * (1024 * 1024 + 1), "larger than 1048576 bytes"),
    ],
)
def test_hostile_files_are_one_line_config_errors(tmp_path: Path, name: str, text: str | bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ConfigError) as caught:
        load_provider_spec(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
