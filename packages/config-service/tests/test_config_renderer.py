from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evaljig_config import LIGHTEVAL_MODEL_KEYS, ConfigError, LightEvalConfigRenderer, ProviderSpec

from .placeholders import FAKE_KEY


def test_rendered_yaml_is_canonical(spec: ProviderSpec, golden: object) -> None:
    text = LightEvalConfigRenderer(spec).render_yaml()
    assert text.endswith("\n")
    assert FAKE_KEY not in text
    assert "api_key" not in text
    params = yaml.safe_load(text)["model_parameters"]
    assert list(params) == [k for k in LIGHTEVAL_MODEL_KEYS if k in params]
    assert golden == text


def test_rendering_is_byte_stable(spec: ProviderSpec) -> None:
    assert LightEvalConfigRenderer(spec).render_yaml() == LightEvalConfigRenderer(spec.model_copy()).render_yaml()


def test_unset_values_are_left_out(spec: ProviderSpec) -> None:
    bare = spec.model_copy(update={"timeout": None, "system_prompt": None})
    params = LightEvalConfigRenderer(bare).model_parameters()
    assert "timeout" not in params
    assert "system_prompt" not in params


def test_write_config_is_atomic_and_yaml_only(spec: ProviderSpec, tmp_path: Path) -> None:
    service = LightEvalConfigRenderer(spec)
    path = service.write_config(tmp_path / "config.yaml")
    assert path.read_text() == service.render_yaml()
    assert [p.name for p in tmp_path.iterdir()] == ["config.yaml"]
    with pytest.raises(ConfigError, match=r"config\.yml: lighteval only reads config files ending in '\.yaml'"):
        service.write_config(tmp_path / "config.yml")
    assert not (tmp_path / "config.yml").exists()


def test_cli_argv(spec: ProviderSpec, tmp_path: Path) -> None:
    argv = LightEvalConfigRenderer(spec).cli_argv(
        tmp_path / "c.yaml", "mini_mmlu|0", custom_tasks=tmp_path / "task.py", output_dir=tmp_path / "out"
    )
    assert argv[:5] == ["lighteval", "endpoint", "litellm", str(tmp_path / "c.yaml"), "mini_mmlu|0"]
    assert argv[5:] == ["--custom-tasks", str(tmp_path / "task.py"), "--output-dir", str(tmp_path / "out"),
                        "--save-details"]  # fmt: skip
    with pytest.raises(ConfigError, match="must name at least one task"):
        LightEvalConfigRenderer(spec).cli_argv(tmp_path / "c.yaml", " ")
