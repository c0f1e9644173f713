from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaljig_config import lighteval_available
from evaljig_config.cli import main

from .conftest import SPEC


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(SPEC))
    return path


def test_render_to_stdout_with_overrides(spec_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(spec_file), "--base-url", "http://127.0.0.1:9/v1", "--model", "openai/fail-once"]) == 0
    out = capsys.readouterr().out
    assert "base_url: http://127.0.0.1:9/v1\n" in out
    assert "model_name: openai/fail-once\n" in out


def test_render_refuses_yml(spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(spec_file), "-o", str(tmp_path / "c.yml")]) == 2
    assert "only reads config files ending in '.yaml'" in capsys.readouterr().err


def test_bad_spec_exits_2_naming_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**SPEC, "model": "gpt-stub"}))
    assert main(["render", str(bad)]) == 2
    assert f"{bad}: field '(spec)': model 'gpt-stub' needs the 'openai/' prefix" in capsys.readouterr().err


@pytest.mark.skipif(lighteval_available(), reason="checks the message shown where lighteval is absent")
def test_run_without_lighteval_says_how_to_get_it(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALJIG_FAKE_API_KEY", "sk-evaljig-fake-0000")
    monkeypatch.setenv("PATH", str(tmp_path))  # no lighteval command either
    argv = ["lighteval", "run", str(spec_file), "t|0", "--custom-tasks", "t.py", "--run-dir", str(tmp_path / "r")]
    assert main(argv) == 2
    assert "make lighteval" in capsys.readouterr().err
