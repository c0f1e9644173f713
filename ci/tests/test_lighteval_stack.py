"""The lighteval stack's plumbing: pip settings made explicit for uv, atomic never-half-built venvs."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import tomllib
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
    import signal, sys, time
    from pathlib import Path
    from ci import lighteval_stack as stack

    # Ctrl-C as a terminal sends it, even where this run was started in the background (`cmd &`), whose
    # children inherit SIGINT ignored and Python then keeps it ignored
    signal.signal(signal.SIGINT, signal.default_int_handler)

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
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "building\n"
        child.send_signal(getattr(signal, signame))
        child.communicate(timeout=30)
    finally:  # never leave the child running (its pipes would be closed by the collector, in another test)
        if child.poll() is None:
            child.kill()
            child.communicate()
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


class FakeSession:
    """A nox session that records commands; ``uv export`` writes a lock export, the rest do nothing."""

    def __init__(self, tmp: Path, interpreter: str = "3.11.7 /usr/bin/python3.11") -> None:
        self.tmp, self.interpreter = tmp, interpreter
        self.virtualenv = type("Venv", (), {"location": str(tmp / "session-venv")})()
        self.runs: list[tuple[str, ...]] = []
        self.logs: list[str] = []

    def run(self, *args: str, **kwargs: object) -> str | None:
        assert kwargs.get("external") is True, "every stack command runs outside the session's own venv"
        self.runs.append(args)
        if args[:2] == ("uv", "export"):
            Path(args[args.index("--output-file") + 1]).write_text("not-pinned-by-the-stack==1.0\ntorch==1.0\n")
        return self.interpreter + "\n" if kwargs.get("silent") else None

    def log(self, *args: object, **kwargs: object) -> None:
        self.logs.append(" ".join(map(str, args)))

    def create_tmp(self) -> str:
        (self.tmp / "session-tmp").mkdir(exist_ok=True)
        return str(self.tmp / "session-tmp")


TEST_REQUIREMENTS = ("pytest>=9.0", "syrupy>=7.0")
SOURCES = ["--find-links", "/opt/wheels", "--index-strategy", "unsafe-best-match"]


def test_ensure_builds_the_stack_once_and_then_reuses_it(tmp_path: Path) -> None:
    target, session = tmp_path / "stack", FakeSession(tmp_path)
    assert stack.ensure(session, TEST_REQUIREMENTS, target=target, sources=SOURCES) == target / "bin"
    python = str(tmp_path / "session-venv" / "bin" / "python")
    assert session.runs[0][0] == python, "the interpreter nox resolved is asked for its version"
    commands = [run[:3] for run in session.runs[1:]]
    assert commands[:3] == [("uv", "export", "--locked"), ("uv", "venv", "--quiet"), ("uv", "pip", "install")]
    venv_create, install, self_check = session.runs[2], session.runs[3], session.runs[4]
    assert venv_create[venv_create.index("--python") + 1] == python
    assert [*SOURCES, *stack.INSTALL_FLAGS] == list(install[5 : 5 + len(SOURCES) + len(stack.INSTALL_FLAGS)])
    assert set(TEST_REQUIREMENTS) <= set(install)
    editable = [install[i + 1] for i, arg in enumerate(install) if arg == "-e"]
    assert editable == list(stack.PACKAGES)
    assert Path(self_check[0]).name == "evaljig-config", "the new stack checks itself before it is kept"
    assert self_check[1:] == stack.SELF_CHECK
    constraints = [Path(install[i + 1]) for i, arg in enumerate(install) if arg == "-c"]
    assert constraints[0] == stack.CONSTRAINTS
    assert constraints[1].read_text() == "not-pinned-by-the-stack==1.0\n", "what the stack pins is left to the stack"
    assert [p.name for p in target.iterdir() if p.name.startswith(".evaljig-stack-")] != []

    again = FakeSession(tmp_path)
    assert stack.ensure(again, TEST_REQUIREMENTS, target=target, sources=SOURCES) == target / "bin"
    assert len(again.runs) == 1, "a current stack only asks the interpreter"
    assert "lighteval stack is current" in again.logs[0]


class FailingCheckSession(FakeSession):
    """The new stack's self-check fails, as it does when a package cannot load its native library."""

    def run(self, *args: str, **kwargs: object) -> str | None:
        result = super().run(*args, **kwargs)
        if args[1:] == stack.SELF_CHECK:
            raise RuntimeError("evaljig-config: lighteval stack check failed: package soundfile 0.14.0 ...")
        return result


def test_a_stack_that_fails_its_self_check_is_never_kept(tmp_path: Path) -> None:
    target = tmp_path / "stack"
    with pytest.raises(RuntimeError, match="stack check failed"):
        stack.ensure(FailingCheckSession(tmp_path), TEST_REQUIREMENTS, target=target, sources=SOURCES)
    assert not target.exists()
    assert list(tmp_path.glob(f"stack{stack.PARTIAL}*")) == [], "no partial stack is left to be reused"
    again = FakeSession(tmp_path)
    stack.ensure(again, TEST_REQUIREMENTS, target=target, sources=SOURCES)
    assert any(run[:3] == ("uv", "pip", "install") for run in again.runs), "the next run builds it anew"


@pytest.mark.parametrize(
    ("interpreter", "requirements", "sources"),
    [
        ("3.11.9 /usr/bin/python3.11", TEST_REQUIREMENTS, SOURCES),
        ("3.11.7 /usr/bin/python3.11", (*TEST_REQUIREMENTS, "vcrpy>=9.4"), SOURCES),
        ("3.11.7 /usr/bin/python3.11", TEST_REQUIREMENTS, ["--index-strategy", "unsafe-best-match"]),
    ],
)
def test_ensure_rebuilds_when_the_interpreter_test_requirements_or_sources_change(
    tmp_path: Path, interpreter: str, requirements: tuple[str, ...], sources: list[str]
) -> None:
    target = tmp_path / "stack"
    stack.ensure(FakeSession(tmp_path), TEST_REQUIREMENTS, target=target, sources=SOURCES)
    changed = FakeSession(tmp_path, interpreter)
    stack.ensure(changed, requirements, target=target, sources=sources)
    assert any(run[:3] == ("uv", "pip", "install") for run in changed.runs)
    assert len([p for p in target.iterdir() if p.name.startswith(".evaljig-stack-")]) == 1


def test_stack_env_puts_the_stack_first_on_path(tmp_path: Path) -> None:
    bin_dir = tmp_path / "stack" / "bin"
    env = stack.stack_env(bin_dir, {"EVALJIG_RUN": "r"}, {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")})
    assert env == {
        "EVALJIG_RUN": "r",
        "PATH": os.pathsep.join([str(bin_dir), "/usr/bin:/bin"]),
        "VIRTUAL_ENV": str(tmp_path / "stack"),
    }


def test_the_test_group_is_the_one_list_of_test_requirements() -> None:
    """dev includes the ``test`` group (what the wheels session and the stack install) instead of repeating it."""
    groups = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["dependency-groups"]
    assert {"include-group": "test"} in groups["dev"]
    test_names = {re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0] for r in groups["test"]}
    dev_names = {re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0] for r in groups["dev"] if isinstance(r, str)}
    assert test_names >= {"pytest", "pytest-xdist", "pytest-socket", "syrupy"}
    assert test_names.isdisjoint(dev_names)
