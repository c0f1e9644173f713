"""``nox -s adoption`` installs as a team does: pip and uv, from dist/, with no constraints file.

The session itself runs in ``make ci`` (the real installs, the real lighteval); here the pieces
that decide what a team's install looks like: no constraints anywhere, the uv project's
project-relative find-links, the lock's portability check, and pip's sources handed to uv.
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
import tomllib
from pathlib import Path

import pytest

from ci import adoption

ROOT = Path(__file__).resolve().parents[2]


def test_the_adoption_session_installs_with_pip_and_uv_and_no_constraints_file() -> None:
    # read, not imported: importing the noxfile registers its sessions with nox a second time
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    [function] = [
        node for node in ast.parse(noxfile).body if isinstance(node, ast.FunctionDef) and node.name == "adoption"
    ]
    session_source = ast.get_source_segment(noxfile, function) or ""
    adopt_source = inspect.getsource(adoption.adopt)
    for source in (session_source, adopt_source):
        assert "CONSTRAINTS" not in source
        assert "constraints" not in source.lower().replace("no constraints", "")
        assert '"-c"' not in source
    assert '("pip", "uv")' in session_source
    calls = [node for node in ast.walk(ast.parse(adopt_source)) if isinstance(node, ast.Constant)]
    assert "evaljig[lighteval]" in adoption.REQUIREMENTS
    assert any(c.value == "add" for c in calls)
    assert any(c.value == "install" for c in calls)


def test_the_team_installs_and_runs_what_the_scaffold_and_its_docs_say() -> None:
    """Adoption runs what a team is told to: the scaffold's packages beside ``evaljig[lighteval]`` and its
    LEV command (``evaljig init``'s last line, the generated workflow, docs/project.md)."""
    from evaljig_fixtures._scaffold import LEV_SUITE_COMMAND, TEAM_TEST_PACKAGES

    assert ("evaljig[lighteval]", *TEAM_TEST_PACKAGES) == adoption.REQUIREMENTS
    assert adoption.LEV_COMMAND == LEV_SUITE_COMMAND
    project = (Path(__file__).resolve().parents[2] / "docs" / "project.md").read_text(encoding="utf-8")
    assert f"'evaljig[lighteval]' {' '.join(TEAM_TEST_PACKAGES)}" in project
    assert LEV_SUITE_COMMAND in project


def test_the_team_pyproject_names_the_wheels_by_a_relative_path(tmp_path: Path) -> None:
    project = tomllib.loads(adoption.uv_project_toml("team-evals", "3.11"))
    assert project["tool"]["uv"]["find-links"] == ["wheels"]
    assert project["project"]["requires-python"] == ">=3.11"


def test_the_team_pyproject_compiles_bytecode_as_the_docs_say() -> None:
    """uv compiles nothing at install: with PYTHONDONTWRITEBYTECODE every lighteval start would recompile torch."""
    project = tomllib.loads(adoption.uv_project_toml("team-evals", "3.11"))
    assert project["tool"]["uv"]["compile-bytecode"] is True
    assert "compile-bytecode = true" in (ROOT / "docs" / "project.md").read_text(encoding="utf-8")


def test_a_lock_naming_a_path_of_this_machine_is_not_portable(tmp_path: Path) -> None:
    repo = tmp_path / "team"
    portable = 'source = { registry = "wheels" }\nsource = { registry = "/opt/wheels" }\n'
    assert adoption.lock_problems(portable, [repo, ROOT]) == []
    leaky = f'[[package]]\nname = "evaljig"\nsource = {{ registry = "{ROOT}/dist" }}\n'
    assert adoption.lock_problems(leaky, [repo, ROOT]) == [f'uv.lock:3: source = {{ registry = "{ROOT}/dist" }}']


def test_pips_sources_become_uvs_own_variables() -> None:
    settings = {
        "index-url": ["https://mirror.example/simple"],
        "extra-index-url": ["file:///opt/pypi/simple", "https://download.pytorch.org/whl/cpu"],
        "find-links": ["/opt/wheels"],
    }
    assert adoption.uv_source_env(settings) == {
        "UV_INDEX_STRATEGY": "unsafe-best-match",
        "UV_DEFAULT_INDEX": "https://mirror.example/simple",
        "UV_INDEX": "file:///opt/pypi/simple https://download.pytorch.org/whl/cpu",
        "UV_FIND_LINKS": "/opt/wheels",
    }
    assert adoption.uv_source_env({}) == {"UV_INDEX_STRATEGY": "unsafe-best-match"}


def test_resolved_versions_are_read_from_a_freeze() -> None:
    freeze = (
        "litellm==1.108.14\nOpenAI==3.57.0\ntorch==2.13.0+cpu\nsix==1.17.0\nhuggingface_hub==1.33.0\n-e file:///x\n"
    )
    assert adoption.resolved_versions(freeze) == {
        "huggingface-hub": "1.33.0",
        "litellm": "1.108.14",
        "openai": "3.57.0",
        "torch": "2.13.0+cpu",
    }


#: pip 26's own lines (an unhinted ``pip install 'evaljig[lighteval]'``), trimmed to what the check reads.
PIP_WALKED = """\
Collecting aiobotocore>=2.18.0 (from inspect-ai>=0.3.140->lighteval==0.13.0)
INFO: pip is looking at multiple versions of aiobotocore to determine which version is compatible with other \
requirements. This could take a while.
INFO: This is taking longer than usual. You might need to provide the dependency resolver with stricter \
constraints to reduce runtime. See https://pip.pypa.io/warnings/backtracking for guidance. If you want to abort \
this run, press Ctrl + C.
INFO: pip is still looking at multiple versions of inspect-ai to determine which version is compatible with \
other requirements. This could take a while.
Successfully installed boto3-1.43.117
"""


def test_pip_walking_back_until_it_says_this_is_taking_longer_names_the_packages() -> None:
    assert adoption.pip_backtracking(PIP_WALKED) == ["aiobotocore", "inspect-ai"]
    short_walk = "INFO: pip is looking at multiple versions of s3fs to determine which version is compatible\n"
    assert adoption.pip_backtracking(short_walk) == []
    assert adoption.pip_backtracking("Successfully installed evaljig-0.1.0\n") == []


def test_a_backtracking_install_fails_naming_the_packages_the_hints_file_and_the_commands() -> None:
    failure = adoption.backtracking_failure(PIP_WALKED)
    assert failure is not None
    assert "releases of aiobotocore, inspect-ai" in failure
    assert f"RESOLVER_HINTS in {adoption.RESOLVER_HINTS_FILE}" in failure
    assert "\nRESOLVER_HINTS:" in (ROOT / adoption.RESOLVER_HINTS_FILE).read_text(encoding="utf-8")  # it is there
    for command in ("`make dist`", "--dry-run --ignore-installed --find-links dist", "`nox -s adoption`"):
        assert command in failure
    assert adoption.backtracking_failure("Successfully installed evaljig-0.1.0\n") is None


def test_the_pip_install_shows_the_resolvers_messages_and_is_read_for_them() -> None:
    argv = adoption.pip_install_argv(Path("/venv/bin/python"), Path("/dist"))
    assert argv[:4] == ["/venv/bin/python", "-m", "pip", "install"]
    assert not {"-q", "--quiet"} & set(argv)  # pip's INFO lines are what pip_backtracking reads
    assert argv[argv.index("--find-links") + 1] == "/dist"
    assert argv[-len(adoption.REQUIREMENTS) :] == list(adoption.REQUIREMENTS)
    assert "backtracking_failure(installed)" in inspect.getsource(adoption.adopt)  # the real run: nox -s adoption


class FakeSession:
    """What a ``Leg`` reads of a nox session: its environment (``None`` removes a variable)."""

    def __init__(self, env: dict[str, str | None]) -> None:
        self.env = env

    def log(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("a leg prints its own lines")


def test_the_legs_run_side_by_side_each_in_its_own_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folders = {name: tmp_path / name for name in ("pip", "uv")}
    for folder in folders.values():
        folder.mkdir()
    session = FakeSession({"EVALJIG_ADOPTION_PROBE": "from-session", "PYTHONDONTWRITEBYTECODE": None})
    legs = {name: adoption.Leg(session, name) for name in folders}
    # each leg waits until the other has started: they can only both finish if they run at the same time
    script = (
        "import os, pathlib, sys, time; pathlib.Path('started').touch(); other = pathlib.Path(sys.argv[1]);"
        " deadline = time.monotonic() + 60\n"
        "while not (other / 'started').exists() and time.monotonic() < deadline: time.sleep(0.01)\n"
        "print(os.getcwd(), os.environ.get('EVALJIG_ADOPTION_PROBE'), os.environ.get('PYTHONDONTWRITEBYTECODE'),"
        " (other / 'started').exists())"
    )

    def run(name: str) -> dict[str, str]:
        other = folders["uv" if name == "pip" else "pip"]
        out = legs[name].step("probe", folders[name], sys.executable, "-c", script, str(other))
        return {"out": out.strip()}

    resolved, failures = adoption.run_side_by_side({name: functools.partial(run, name) for name in folders})

    assert failures == []
    for name, folder in folders.items():
        assert resolved[name]["out"] == f"{folder} from-session None True"
        assert [step for step, _ in legs[name].steps] == [f"{name}: probe"]
    printed = capsys.readouterr().out.splitlines()
    assert f"[pip] {folders['pip']} from-session None True" in printed
    assert f"[uv] {folders['uv']} from-session None True" in printed


def test_a_failed_step_names_its_installer_step_and_last_lines_and_the_other_leg_finishes(tmp_path: Path) -> None:
    session = FakeSession({})
    legs = {name: adoption.Leg(session, name) for name in ("pip", "uv")}
    failing = "import sys; print('\\n'.join(f'line {n}' for n in range(100))); sys.exit(3)"

    def pip() -> dict[str, str]:
        legs["pip"].step("install evaljig[lighteval]", tmp_path, sys.executable, "-c", failing)
        legs["pip"].step("never reached", tmp_path, sys.executable, "-c", "")
        return {}

    def uv() -> dict[str, str]:
        legs["uv"].step("uv add evaljig[lighteval]", tmp_path, sys.executable, "-c", "print('fine')")
        return {"evaljig": "0.1.0"}

    resolved, failures = adoption.run_side_by_side({"pip": pip, "uv": uv})

    assert resolved == {"uv": {"evaljig": "0.1.0"}}
    [message] = failures
    first, where, *tail = message.splitlines()
    assert first.startswith("pip: install evaljig[lighteval] failed (exit 3 after ")
    assert where == f"in {tmp_path}; its last lines:"
    assert tail == [f"line {n}" for n in range(100 - adoption.TAIL_LINES, 100)]
    assert [step for step, _ in legs["pip"].steps] == ["pip: install evaljig[lighteval]"]


def test_a_stack_is_every_package_of_a_freeze_but_the_installers_own_tools() -> None:
    pip_freeze = "evaljig==0.1.0\nlitellm==1.108.14\npip==26.1\nsetuptools==80.0\nTorch==2.13.0+cpu\n"
    uv_freeze = (
        "evaljig @ file:///tmp/team-uv/wheels/evaljig-0.1.0-py3-none-any.whl\nlitellm==1.108.14\ntorch==2.13.0+cpu\n"
    )
    assert adoption.stack_of(pip_freeze) == {"evaljig": "0.1.0", "litellm": "1.108.14", "torch": "2.13.0+cpu"}
    assert adoption.stack_of(uv_freeze) == adoption.stack_of(pip_freeze)


def _fixtures(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def test_fixture_folders_differ_by_file_bytes_and_by_files_only_one_has_not_by_bytecode(tmp_path: Path) -> None:
    one = _fixtures(tmp_path / "one", {"a.json": b"1", "sub/b.yaml": b"2", "__pycache__/t.pyc": b"x"})
    other = _fixtures(tmp_path / "other", {"a.json": b"1", "sub/b.yaml": b"3", "c.txt": b""})
    assert adoption.different_files(one, other) == ["c.txt", "sub/b.yaml"]
    assert adoption.different_files(one, one) == []


STACK = {"evaljig": "0.1.0", "lighteval": "0.13.0"}


def test_the_suite_runs_once_when_both_teams_have_the_same_stack_and_fixtures(tmp_path: Path) -> None:
    pip, uv = (_fixtures(tmp_path / n, {"a.json": b"1"}) for n in ("pip", "uv"))
    suite = adoption.SharedSuite()
    suite.file("pip", dict(STACK))
    suite.file("uv", dict(STACK))
    assert suite.stands_in("uv", uv) == ("", "the first team at its LEV suite runs it")
    other, why = suite.stands_in("pip", pip)
    assert (other, why) == ("uv", "the same 2 packages and the same fixtures as uv, whose suite runs")


def test_each_team_runs_its_suite_when_the_stacks_or_the_fixtures_differ(tmp_path: Path) -> None:
    pip, uv = (_fixtures(tmp_path / n, {"a.json": n.encode()}) for n in ("pip", "uv"))
    suite = adoption.SharedSuite()
    suite.file("pip", dict(STACK))
    suite.file("uv", {**STACK, "lighteval": "0.13.1"})
    suite.file("uv", dict(STACK))  # only the first filing counts
    assert suite.stands_in("pip", pip)[0] == ""
    assert suite.stands_in("uv", uv) == ("", "uv resolved a different stack from pip's: lighteval")

    same = adoption.SharedSuite()
    same.file("pip", dict(STACK))
    same.file("uv", dict(STACK))
    assert same.stands_in("pip", pip)[0] == ""
    assert same.stands_in("uv", uv) == ("", "uv's builder wrote different fixtures from pip's: a.json")


def test_the_first_team_at_its_suite_runs_it_whatever_the_other_has_done_so_far(tmp_path: Path) -> None:
    suite = adoption.SharedSuite()
    suite.file("uv", dict(STACK))
    assert suite.stands_in("uv", tmp_path) == ("", "the first team at its LEV suite runs it")  # pip still installs
    # a team that never filed a stack (it failed first) never reaches its suite; were it to, it runs its own
    assert suite.stands_in("pip", tmp_path) == ("", "the stack of pip is unknown")
