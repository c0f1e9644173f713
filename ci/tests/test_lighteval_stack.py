"""The lighteval stack's plumbing: pip settings made explicit for uv, atomic never-half-built venvs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ci import lighteval_stack as stack

ROOT = Path(__file__).resolve().parents[2]

# `pip config list` on the CI machines: find-links from PIP_FIND_LINKS and pip.conf, two file indexes
MACHINE = """\
:env:.cert='/etc/ssl/certs/ca-certificates.crt'
:env:.default-timeout='180'
:env:.find-links='/opt/wheels'
global.cert='/etc/ssl/certs/ca-certificates.crt'
global.extra-index-url='file:///opt/pypi/simple file:///opt/pypi-more/simple'
global.find-links='/opt/wheels'
"""


def test_machine_pip_settings_become_explicit_uv_flags() -> None:
    settings = stack.pip_settings(MACHINE, {})
    assert stack.uv_source_args(settings, {}) == [
        "--extra-index-url", "file:///opt/pypi/simple",
        "--extra-index-url", "file:///opt/pypi-more/simple",
        "--find-links", "/opt/wheels",
        "--index-strategy", "unsafe-best-match",
    ]  # fmt: skip


def test_pip_variables_beat_the_config_and_env_beats_install_beats_global() -> None:
    text = "global.index-url='https://a/simple'\ninstall.index-url='https://b/simple'\n"
    assert stack.pip_settings(text, {})["index-url"] == ["https://b/simple"]
    env = {"PIP_INDEX_URL": "https://c/simple", "PIP_FIND_LINKS": "/w1 /w2"}
    assert stack.pip_settings(text, env) == {"find-links": ["/w1", "/w2"], "index-url": ["https://c/simple"]}


def test_stack_index_variable_adds_an_index_for_the_stack_only() -> None:
    args = stack.uv_source_args({}, {stack.STACK_INDEX_ENV: "https://download.pytorch.org/whl/cpu"})
    assert args == [
        "--extra-index-url", "https://download.pytorch.org/whl/cpu", "--index-strategy", "unsafe-best-match",
    ]  # fmt: skip


def test_unrelated_and_malformed_config_lines_are_ignored() -> None:
    text = "global.timeout='60'\nnonsense\n=\nuser.find-links='/x'\nglobal.find-links=''\n"
    assert stack.pip_settings(text, {}) == {}


def test_digest_changes_with_any_file_or_fact(tmp_path: Path) -> None:
    a = tmp_path / "a.txt"
    a.write_text("one")
    first = stack.digest([a], ["3.11.2 /usr/bin/python3.11"])
    assert first == stack.digest([a], ["3.11.2 /usr/bin/python3.11"])
    assert first != stack.digest([a], ["3.11.7 /opt/python/3.11.7/bin/python3.11"])
    a.write_text("two")
    assert first != stack.digest([a], ["3.11.2 /usr/bin/python3.11"])


def test_compatible_constraints_drop_what_the_stack_pins() -> None:
    locked = "# header\nPyYAML==6.0.2\nhttpx==0.28.1 ; python_full_version >= '3.11'\n    # via x\nrich==13.0\n"
    pins = "# comment\npyyaml==6.0.3\nRich==15.0.0\n"
    assert stack.compatible_constraints(locked, pins) == "httpx==0.28.1 ; python_full_version >= '3.11'\n"


def test_a_complete_build_is_stamped_renamed_into_place_and_then_reused(tmp_path: Path) -> None:
    target, calls = tmp_path / "stack", []

    def build(venv: Path) -> None:
        calls.append(venv)
        assert venv != target
        assert not any(venv.iterdir()), "a build starts in an empty temporary folder"
        (venv / "bin").mkdir()

    assert stack.build_atomically(target, ".stamp-1", build) is True
    assert (target / "bin").is_dir()
    assert (target / ".stamp-1").is_file()
    assert stack.build_atomically(target, ".stamp-1", build) is False
    assert len(calls) == 1
    assert stack.build_atomically(target, ".stamp-2", build) is True, "another digest rebuilds"
    assert not (target / ".stamp-1").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stack"]


def test_a_failed_build_leaves_nothing_and_the_old_stack_is_not_mistaken_for_new(tmp_path: Path) -> None:
    target = tmp_path / "stack"
    stack.build_atomically(target, ".stamp-old", lambda venv: (venv / "old").mkdir())

    def broken(venv: Path) -> None:
        (venv / "half").mkdir()
        raise subprocess.CalledProcessError(1, ["uv", "pip", "install"])

    with pytest.raises(subprocess.CalledProcessError):
        stack.build_atomically(target, ".stamp-new", broken)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stack"]
    assert not stack.is_current(target, ".stamp-new")
    assert stack.build_atomically(target, ".stamp-new", lambda venv: (venv / "new").mkdir()) is True
    assert sorted(p.name for p in target.iterdir()) == [".stamp-new", "new"]


INTERRUPTED_BUILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from ci import lighteval_stack as stack

    def build(venv):
        (venv / "half-installed").write_text("x")
        print("building", flush=True)
        time.sleep(60)

    stack.build_atomically(Path(sys.argv[1]), ".stamp", build)
    """
)


@pytest.mark.parametrize("signame", ["SIGINT", "SIGKILL"])
def test_an_interrupted_build_is_rebuilt_from_scratch(tmp_path: Path, signame: str) -> None:
    target = tmp_path / "stack"
    child = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED_BUILD, str(target)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert child.stdout is not None
    assert child.stdout.readline() == "building\n"
    child.send_signal(getattr(signal, signame))
    child.communicate(timeout=30)
    assert child.returncode != 0
    assert not stack.is_current(target, ".stamp")
    assert not target.exists()
    seen: list[list[str]] = []
    assert stack.build_atomically(target, ".stamp", lambda venv: seen.append([p.name for p in venv.iterdir()])) is True
    assert seen == [[]], "the rebuild starts from an empty folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stack"], "the killed build's folder is swept"


def test_uv_args_command_prints_flags_or_usage() -> None:
    script = ROOT / "ci" / "lighteval_stack.py"
    bad = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=False)
    assert bad.returncode == 2
    assert bad.stderr.startswith("usage:")
    env = {**os.environ, "PIP_FIND_LINKS": "/some/wheels", "PIP_CONFIG_FILE": os.devnull}
    good = subprocess.run([sys.executable, str(script), "uv-args"], capture_output=True, text=True, env=env, check=True)
    assert "--find-links /some/wheels" in good.stdout
    assert good.stdout.rstrip().endswith("--index-strategy unsafe-best-match")
