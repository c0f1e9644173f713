"""``evaljig-config lighteval check``: a stack that cannot run offline fails once, in one line per package.

The broken package here is a ``soundfile`` whose import dlopens a shared library this machine
does not have, exactly what the pure ``soundfile`` wheel does on a machine without a system
libsndfile (the stack once shipped it; transformers imports soundfile whenever it is installed).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaljig_config import (
    LIGHTEVAL_EXTRA,
    LIGHTEVAL_STACK,
    ConfigError,
    LightEvalUnavailable,
    StackProblem,
    check_lighteval_stack,
    prepare_lighteval,
)
from evaljig_config._lighteval_import import INSTALL_HINT, import_lighteval_module

ROOT = Path(__file__).resolve().parents[3]
MISSING_LIBRARY = "libsndfile-evaljig-missing.so"
BROKEN_SOUNDFILE = f"""
import ctypes
_snd = ctypes.CDLL({MISSING_LIBRARY!r})  # the pure wheel's dlopen of a library the system lacks
"""


def run_check(pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [sys.executable, "-m", "evaljig_config", "lighteval", "check"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip


def test_a_package_that_cannot_load_its_native_library_fails_the_check_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "soundfile.py").write_text(BROKEN_SOUNDFILE)
    done = run_check(tmp_path)
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if "soundfile" in line]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("evaljig-config: lighteval stack check failed: importing soundfile")
    assert f"package soundfile cannot load the native library {MISSING_LIBRARY}" in lines[0]
    assert "Traceback" not in done.stderr


def test_the_check_names_the_installed_distribution_and_version() -> None:
    problems = check_lighteval_stack(modules=[("evaljig_config._no_such_module", "a test")], optional=[])
    assert problems == [
        StackProblem(
            module="evaljig_config._no_such_module",
            why="a test",
            package="evaljig_config._no_such_module is not installed",
            error="ModuleNotFoundError: No module named 'evaljig_config._no_such_module'",
            library=None,
        )
    ]
    assert check_lighteval_stack(modules=[("json", "stdlib")], optional=[("json", "present")]) == []


def test_an_optional_module_is_checked_only_when_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_lighteval_stack(modules=[], optional=[("evaljig_not_installed_anywhere", "optional")]) == []
    (tmp_path / "evaljig_broken_optional.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    [problem] = check_lighteval_stack(modules=[], optional=[("evaljig_broken_optional", "optional")])
    assert problem.package == "evaljig_broken_optional"
    assert problem.error == "RuntimeError: boom at import"
    assert problem.line().endswith(
        "failed: RuntimeError: boom at import; evaljig_broken_optional is no installed package: fix or remove it "
        "from sys.path"
    )
    installed = StackProblem("lighteval.pipeline", "why", "lighteval 0.13.0", "AttributeError: DISK", None)
    assert installed.line().endswith("AttributeError: DISK; fix: pip install --force-reinstall 'lighteval==0.13.0'")
    assert installed.line(after_mismatch=True).endswith(
        "AttributeError: DISK; fix the version reported above first (the likely cause), then run this check again"
    )


def test_the_install_hint_names_the_stack_the_lev_matrix_installs() -> None:
    requirements = [
        line.strip()
        for line in (ROOT / "ci" / "lighteval-requirements.txt").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert requirements == list(LIGHTEVAL_STACK)
    assert "pip install " + " ".join(f"'{r}'" for r in LIGHTEVAL_EXTRA) in INSTALL_HINT
    with pytest.raises(LightEvalUnavailable, match="lighteval check"):
        import_lighteval_module("evaljig_surely_not_lighteval")


def test_prepare_lighteval_creates_the_placeholder_once_and_names_a_read_only_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = tmp_path / "lighteval" / "tasks" / "tasks"
    tasks.mkdir(parents=True)
    (tmp_path / "lighteval" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    placeholder = prepare_lighteval()
    assert placeholder == tasks / "tinyBenchmarks.pkl"
    assert placeholder.read_bytes() == b"", "an empty file stops lighteval's download at import"
    assert prepare_lighteval() == placeholder
    if os.geteuid() != 0:  # root writes into read-only folders
        placeholder.unlink()
        tasks.chmod(0o555)
        try:
            with pytest.raises(ConfigError, match=r"tinyBenchmarks\.pkl: cannot create"):
                prepare_lighteval()
        finally:
            tasks.chmod(0o755)


def test_prepare_lighteval_leaves_an_environment_without_lighteval_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert prepare_lighteval() is None  # the workspace venv has no lighteval
    (tmp_path / "lighteval").mkdir()
    (tmp_path / "lighteval" / "__init__.py").write_text("")  # a stand-in without the task modules
    monkeypatch.syspath_prepend(str(tmp_path))
    assert prepare_lighteval() is None
    assert not (tmp_path / "lighteval" / "tasks").exists()
