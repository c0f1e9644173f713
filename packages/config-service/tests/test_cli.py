from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evaljig_config import lighteval_available
from evaljig_config._cli import main
from testkit.cli import run_with_full_stdout

from .placeholders import SPEC


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


def _one_line(err: str) -> str:
    assert err.endswith("\n")
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        ("deep.json", "[" * 200_000 + "]" * 200_000, "not valid JSON: nested deeper than 100 levels"),
        ("deep.yaml", "a:\n" + "".join(f"{' ' * i} - \n" for i in range(1, 1200)), "nested deeper than 100 levels"),
        ("deep-flow.yaml", "{a: " * 100_000 + "}" * 100_000, "not valid YAML: nested deeper than 100 levels"),
        ("big.json", '{"concurrency": ' + "9" * 5000 + "}", "not valid JSON: integer with 5000 digits"),
        ("big.yaml", "concurrency: " + "9" * 5000 + "\n", "Exceeds the limit (4300 digits)"),
        ("dup.yaml", "name: a\nname: b\n", "field 'name': duplicate key (line 2)"),
        ("bad.yaml", "a: [\nb: 1\n", "not valid YAML"),
    ],
)
def test_hostile_spec_files_are_one_line_exit_2(
    tmp_path: Path, name: str, text: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert main(["render", str(path)]) == 2
    err = _one_line(capsys.readouterr().err)
    assert err.startswith(f"evaljig-config: {path}: ")
    assert reason in err


def test_several_problems_are_still_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({**SPEC, "concurrency": True, "timeout": "30"}))
    assert main(["render", str(path)]) == 2
    err = _one_line(capsys.readouterr().err)
    assert f"{path}: field 'timeout': Input should be a valid number; {path}: field 'concurrency'" in err


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("folder.yaml", "Is a directory"),
        ("file.txt/c.yaml", "File exists"),
        ("/proc/evaljig-config.yaml", "No such file or directory"),  # a folder nobody may create files in
    ],
)
def test_output_that_cannot_be_written_is_one_line_exit_2(
    spec_file: Path, tmp_path: Path, target: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "folder.yaml").mkdir()
    (tmp_path / "file.txt").write_text("x")
    output = tmp_path / target
    assert main(["render", str(spec_file), "-o", str(output)]) == 2
    err = _one_line(capsys.readouterr().err)
    assert err.startswith(f"evaljig-config: {output}: cannot write: ")
    assert reason in err
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp file left behind


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_output_folder_is_one_line_exit_2(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o555)
    assert main(["render", str(spec_file), "-o", str(folder / "c.yaml")]) == 2
    assert "cannot write: Permission denied" in _one_line(capsys.readouterr().err)


def _cli(args: list[str], max_file_bytes: int) -> tuple[int, str]:
    def limit() -> None:  # a full disk, for this process only: writes past the limit fail with EFBIG
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    # coverage, when it measures subprocesses, could not save its data under the limit either
    env = {k: v for k, v in os.environ.items() if k not in ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")}
    # nor bytecode: CPython renames a partly written .pyc into place (its write is not retried past
    # EFBIG), and every later process importing that module fails with "marshal data too short"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "evaljig_config._cli", *args],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        env=env,
        check=False,
    )
    return proc.returncode, proc.stderr


def test_stdout_to_dev_full_is_one_line_exit_2(spec_file: Path) -> None:
    proc = run_with_full_stdout("evaljig_config._cli", "render", str(spec_file))
    assert proc.returncode == 2
    assert _one_line(proc.stderr) == "evaljig-config: output: No space left on device\n"  # as every evaljig CLI


def test_full_output_folder_is_one_line_exit_2(spec_file: Path, tmp_path: Path) -> None:
    output = tmp_path / "c.yaml"
    code, err = _cli(["render", str(spec_file), "-o", str(output)], max_file_bytes=64)
    assert code == 2
    assert _one_line(err) == f"evaljig-config: {output}: cannot write: File too large\n"
    assert list(tmp_path.iterdir()) == [spec_file]  # neither the file nor a temp file


def test_run_dir_under_a_file_is_one_line_exit_2(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALJIG_FAKE_API_KEY", "sk-evaljig-fake-0000")
    monkeypatch.setenv("PATH", str(tmp_path))
    (tmp_path / "lighteval").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "lighteval").chmod(0o755)
    (tmp_path / "t.py").write_text("TASKS_TABLE = []\n")
    (tmp_path / "file").write_text("x")
    argv = ["lighteval", "run", str(spec_file), "t|0", "--custom-tasks", str(tmp_path / "t.py")]
    assert main([*argv, "--run-dir", str(tmp_path / "file" / "run")]) == 2
    assert "Not a directory" in _one_line(capsys.readouterr().err)
