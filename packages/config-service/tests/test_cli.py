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
    (tmp_path / "t.py").write_text("TASKS_TABLE = []\n")
    for path in ("cli", "python"):
        run_dir = tmp_path / f"run-{path}"
        argv = ["lighteval", "run", str(spec_file), "t|0", "--custom-tasks", str(tmp_path / "t.py")]
        assert main([*argv, "--run-dir", str(run_dir), "--path", path]) == 2
        assert "make lighteval" in capsys.readouterr().err
        assert not run_dir.exists()  # nothing written, so the same --run-dir works once lighteval is there


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--custom-tasks", "missing.py"], "missing.py: custom tasks module not found (--custom-tasks)"),
        (["--custom-tasks", "t.py", "--max-samples", "0"], "max_samples: must be at least 1, got 0"),
        (["--custom-tasks", "t.py", "--model", "gpt-4"], "(model override): field '(spec)': model 'gpt-4' needs"),
        (["--custom-tasks", "t.py", "--base-url", "ftp://x"], "(base_url override): field 'base_url': must be an"),
    ],
)
def test_run_refuses_bad_arguments_before_writing(
    spec_file: Path,
    tmp_path: Path,
    extra: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EVALJIG_FAKE_API_KEY", "sk-evaljig-fake-0000")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.py").write_text("TASKS_TABLE = []\n")
    assert main(["lighteval", "run", str(spec_file), "t|0", "--run-dir", "run", *extra]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
