"""``evaljig init`` (``evaljig-fixtures init``): the LEV scaffold in a repository, never overwriting without --force.

The scaffolded suite's lighteval cases run in ``nox -s adoption`` (the real lighteval); here the
layout, the options, the refusals, the workflow (actionlint) and the lighteval-free case LEV-004.
"""

from __future__ import annotations

import ast
import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evaljig_config import load_provider_spec
from evaljig_fixtures import init_main, load_dataset_package
from evaljig_fixtures._cli import main
from evaljig_fixtures._init_command import Options, planned_files
from testkit.xdist_workers import workers_by_module

LEV = Path("backend/tests/lighteval")
ROWS = [
    {"question": "Which port does HTTPS use by default?", "choices": ["80", "443", "8080"], "answer": "B"},
    {"question": "Is 7 prime?", "choices": ["yes", "no"], "answer": 0},
    {"question": "2 ** 10 = ?", "choices": ["1000", "1024", "2048", "512"], "answer": "B"},
]
OPTIONS = ["--provider", "acme", "--model", "openai/acme-small", "--api-key-env", "ACME_TOKEN"]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".gitignore").write_text("*.pyc", encoding="utf-8")  # no final newline: kept, then appended to
    (root / "team-qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_init_scaffolds_the_layout_with_the_teams_provider_and_dataset(repo: Path) -> None:
    assert init_main([*OPTIONS, "--dataset", "team-qa.jsonl"]) == 0

    fixtures = repo / LEV / "fixtures"
    assert {p for p in tree(repo) if p.startswith(("backend", "scripts", ".github"))} == {
        f"{LEV}/{name}"
        for name in ("conftest.py", "lev_paths.py", *(f"test_{k}_contract.py" for k in ("cli", "python", "replay")))
    } | {
        f"{LEV}/data/team-qa.jsonl",
        f"{LEV}/data/multilingual.jsonl",
        f"{LEV}/fixtures/providers/acme.json",
        f"{LEV}/fixtures/datasets/team-qa.zip",
        f"{LEV}/fixtures/datasets/multilingual.zip",
        f"{LEV}/fixtures/configs/expected-config.yaml",
        "scripts/testing/build_lighteval_fixture.py",
        ".github/workflows/lighteval.yml",
    }  # expected-cli-stdout.txt and the cassette need the real lighteval (nox -s adoption writes them)
    spec = load_provider_spec(fixtures / "providers" / "acme.json")
    assert (spec.name, spec.model, spec.api_key_env) == ("acme", "openai/acme-small", "ACME_TOKEN")
    assert "model_name: openai/acme-small" in (fixtures / "configs" / "expected-config.yaml").read_text()
    package = load_dataset_package(fixtures / "datasets" / "team-qa.zip")
    assert [r["question"] for r in package.rows] == [r["question"] for r in ROWS]
    assert len(load_dataset_package(fixtures / "datasets" / "multilingual.zip").rows) == 22
    assert (repo / ".gitignore").read_text() == "*.pyc\n# evaljig LEV tests: per-case reports\nbackend/reports/\n"
    assert 'DATASET = FIXTURES / "datasets/team-qa.zip"' in (repo / LEV / "lev_paths.py").read_text()


def test_rerun_with_the_same_options_changes_nothing_and_other_options_need_force(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", *OPTIONS, "--no-build"]) == 0
    before = tree(repo)
    assert init_main([*OPTIONS, "--no-build"]) == 0
    assert init_main([*OPTIONS, "--no-build"]) == 0
    assert tree(repo) == before  # .gitignore lines are not appended twice
    capsys.readouterr()

    assert init_main(["--provider", "other", "--no-build"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "evaljig init: would overwrite backend/tests/lighteval/lev_paths.py, "
        "backend/tests/lighteval/test_replay_contract.py, "  # its re-record hint names the key's variable
        "scripts/testing/build_lighteval_fixture.py; pass --force to replace them"
    ]
    assert tree(repo) == before
    assert init_main(["--provider", "other", "--no-build", "--force"]) == 0
    assert "other.json" in (repo / LEV / "lev_paths.py").read_text()


def test_init_takes_the_target_folder_as_git_init_and_uv_init_do(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert init_main([".", *OPTIONS, "--no-build"]) == 0
    assert (repo / LEV / "conftest.py").is_file()

    assert init_main(["new/team-repo", *OPTIONS, "--no-build"]) == 0  # created, as git init creates it
    assert (repo / "new" / "team-repo" / LEV / "conftest.py").is_file()
    assert (repo / "new" / "team-repo" / "scripts" / "testing" / "build_lighteval_fixture.py").is_file()

    capsys.readouterr()
    assert init_main(["team-qa.jsonl", "--no-build"]) == 2
    assert capsys.readouterr().err.strip() == (
        "evaljig init: team-qa.jsonl: exists and is not a folder; give the repository's root folder"
    )


def test_a_bad_dataset_is_one_line_and_nothing_is_written(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = repo / "bad.jsonl"
    bad.write_text(json.dumps({"question": "Q?", "choices": ["a", "b"], "answer": "D"}) + "\n", encoding="utf-8")
    before = tree(repo)
    assert init_main(["--dataset", str(bad)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"evaljig init: {bad}: row bad-0001: field 'answer': must be one of A, B (or a 0-based index)"
    )
    assert tree(repo) == before


def test_bad_provider_options_are_named(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert init_main(["--api-key-env", "not a name"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evaljig init: ")
    assert "api_key_env" in err
    assert not (repo / "backend").exists()


def test_the_scaffolded_workflow_passes_actionlint(repo: Path) -> None:
    actionlint = shutil.which("actionlint", path=str(Path(sys.executable).parent))
    if actionlint is None:
        pytest.skip("actionlint is not installed beside this interpreter (the lint dependency group has it)")
    assert init_main(["--no-build"]) == 0
    done = subprocess.run(
        [actionlint, ".github/workflows/lighteval.yml"], capture_output=True, text=True, check=False, cwd=repo
    )
    assert done.returncode == 0, done.stdout + done.stderr
    workflow = (repo / ".github/workflows/lighteval.yml").read_text()
    assert "python -m pytest -m lighteval --no-cov -n auto" in workflow  # the cases side by side (xdist)
    assert "'evaljig[lighteval]' pytest-cov pytest-split pytest-xdist" in workflow
    assert "--splits ${{ strategy.job-total }} --group ${{ matrix.group }}" in workflow
    assert "evaljig-report merge" in workflow


def test_the_scaffolded_drift_case_passes_without_lighteval(repo: Path) -> None:
    """LEV-004 (config and fixtures unchanged) needs no lighteval: the scaffold's own suite, as a team runs it,
    in a backend whose own conftest imports its own ``utils`` module first (the scaffold's names never clash)."""
    (repo / "backend").mkdir()
    (repo / "backend" / "utils.py").write_text("TEAM_HELPER = True\n", encoding="utf-8")
    (repo / "backend" / "conftest.py").write_text("import utils\n\nassert utils.TEAM_HELPER\n", encoding="utf-8")
    assert init_main(OPTIONS) == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "EVALJIG_", "COV_"))}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "lighteval", "-k", "lev_004", "-p", "no:cacheprovider",
         "-p", "no:randomly", "-q"],
        capture_output=True, text=True, check=False, cwd=repo / "backend", env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "LEV-004  PASSED" in done.stdout


def test_the_scaffolded_python_path_cases_share_one_xdist_worker(repo: Path) -> None:
    """``-n 2``: the scaffold's conftest keeps ``test_python_contract.py`` (lighteval imported into the worker,
    ~13 s of CPU each time) on one worker. Only where each case ran is read: without built fixtures (``--no-build``)
    every case stops at its provider spec, which needs no lighteval."""
    assert init_main([*OPTIONS, "--no-build"]) == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "EVALJIG_", "COV_"))}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "lighteval", "-n", "2", "-v", "-p", "no:cacheprovider",
         "-p", "no:randomly"],
        capture_output=True, text=True, check=False, cwd=repo / LEV, env=env,
    )  # fmt: skip
    workers = workers_by_module(done.stdout)
    assert len(workers.get("test_python_contract.py", ())) == 1, done.stdout
    assert len(set().union(*workers.values())) == 2, done.stdout  # the other worker took the CLI cases


EVALS = ["--tests-dir", "evals/tests", "--scripts-dir", "evals/scripts"]


def test_the_scaffold_goes_where_the_team_keeps_its_pipeline(repo: Path) -> None:
    """``--tests-dir evals/tests --scripts-dir evals/scripts``: every path follows, nothing lands in backend/."""
    assert init_main([*OPTIONS, *EVALS, "--no-build"]) == 0

    written = {p for p in tree(repo) if not p.startswith((".gitignore", "team-qa"))}
    assert written == {
        *(f"evals/tests/lighteval/{n}" for n in ("conftest.py", "lev_paths.py", "test_cli_contract.py")),
        *(f"evals/tests/lighteval/{n}" for n in ("test_python_contract.py", "test_replay_contract.py")),
        "evals/tests/lighteval/data/mini-mmlu.jsonl",
        "evals/tests/lighteval/data/multilingual.jsonl",
        "evals/scripts/build_lighteval_fixture.py",
        ".github/workflows/lighteval.yml",
    }
    assert (repo / ".gitignore").read_text().endswith("\nevals/reports/\n")
    workflow = (repo / ".github/workflows/lighteval.yml").read_text()
    assert "working-directory: evals\n" in workflow
    # drift is the LEV suite's (LEV-004's --check without lighteval, LEV-001's own run against the CLI golden):
    # no step starts lighteval again for the same table
    assert not [line for line in workflow.splitlines() if line.lstrip().startswith("run:") and "--check" in line]
    paths = (repo / "evals/tests/lighteval/lev_paths.py").read_text()
    assert 'RUN_BUILDER = "cd evals && python scripts/build_lighteval_fixture.py"' in paths
    cli_cases = (repo / "evals/tests/lighteval/test_cli_contract.py").read_text()
    assert '"--check", "--no-lighteval"' in cli_cases
    assert (
        'assert_golden_file(run.stdout_table, EXPECTED_CLI_STDOUT, rebuild=f"{RUN_BUILDER} --only cli-stdout-golden")'
        in cli_cases
    )
    assert "path: evals/reports/" in workflow
    assert "backend/" not in workflow
    script = (repo / "evals/scripts/build_lighteval_fixture.py").read_text()
    assert "Run from evals/:  python scripts/build_lighteval_fixture.py" in script
    assert "backend" not in (repo / "evals/tests/lighteval/lev_paths.py").read_text()
    assert '"backend"' not in script
    assert "backend/" not in script


def test_check_in_a_custom_layout_names_that_build_script(repo: Path) -> None:
    """The fix line of the scaffold's ``--check`` names the command that rebuilds *these* fixtures, from evals/."""
    assert init_main([*OPTIONS, *EVALS, "--no-build"]) == 0
    evals = repo / "evals"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    build = [sys.executable, "scripts/build_lighteval_fixture.py", "--no-lighteval"]
    done = subprocess.run(build, capture_output=True, text=True, cwd=evals, env=env, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    config = evals / "tests/lighteval/fixtures/configs/expected-config.yaml"
    config.write_text(config.read_text().replace("api_max_retry: 3", "api_max_retry: 9"))

    done = subprocess.run([*build, "--check"], capture_output=True, text=True, cwd=evals, env=env, check=False)

    assert done.returncode == 1, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last == "fix: run `python scripts/build_lighteval_fixture.py` and commit fixtures/ (never edit it by hand)"
    assert "evaljig-fixtures regen" not in done.stdout


HOSTILE_MODELS = [
    'openai/x", "base_url": "https://evil.example/v1", "y": "',
    "openai/x'''\nimport os\nos.system('true')\n'''",
    "openai/a b",
    "openai/" + "m" * 300,
    "gpt-4o-mini",
]


@pytest.mark.parametrize("model", HOSTILE_MODELS)
def test_a_hostile_model_is_refused_in_one_line_and_nothing_is_written(
    repo: Path, capsys: pytest.CaptureFixture[str], model: str
) -> None:
    before = tree(repo)
    assert init_main(["new-repo", "--model", model, "--no-build"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("evaljig init: --model ")
    assert "must be 'openai/' followed by a model id" in err
    assert tree(repo) == before
    assert not (repo / "new-repo").exists()  # not even the repository's folder


@pytest.mark.parametrize("model", HOSTILE_MODELS[:2])
def test_every_option_reaches_generated_code_as_a_literal(tmp_path: Path, model: str) -> None:
    """Rendered past validation on purpose: the value comes back exactly, and base_url stays the loopback."""
    options = Options(
        root=tmp_path, provider="acme", model=model, api_key_env="ACME_TOKEN", dataset=None, force=False, build=False
    )
    script = planned_files(options)["scripts/testing/build_lighteval_fixture.py"].decode()
    [spec] = [
        node.value
        for node in ast.parse(script).body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "PROVIDER_SPEC"
    ]
    values = ast.literal_eval(spec)
    assert values["model"] == model
    assert values["base_url"] == "http://127.0.0.1:8000/v1"
    assert set(values) == {
        "name", "base_url", "model", "api_key_env", "generation", "retry", "timeout", "concurrency",
    }  # fmt: skip


def test_init_writes_nothing_when_its_last_write_cannot_happen(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / ".gitignore").unlink()
    (repo / ".gitignore").mkdir()  # written last (it is appended to): a folder cannot be
    before = tree(repo)
    assert init_main([*OPTIONS, "--no-build"]) == 2
    assert capsys.readouterr().err == (
        "evaljig init: .gitignore: exists and is a folder, not a file init writes; move it away and rerun\n"
    )
    assert tree(repo) == before
    assert sorted(p.name for p in repo.iterdir()) == [".gitignore", "team-qa.jsonl"]


def test_a_failing_rename_rolls_every_file_back(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fails at the last rename (ENOSPC): the files already in place get their old content back."""
    assert init_main([*OPTIONS, "--no-build"]) == 0
    (repo / LEV / "conftest.py").write_text("# the team's own edit\n")
    before = tree(repo)
    real_replace = Path.replace

    def replace(self: Path, target: Any) -> Path:
        if Path(target).name == "build_lighteval_fixture.py":  # the last of the scaffold's files, sorted
            raise OSError(errno.ENOSPC, "No space left on device", str(target))
        return real_replace(self, target)

    monkeypatch.setattr(Path, "replace", replace)
    assert init_main([*OPTIONS, "--dataset", "team-qa.jsonl", "--force", "--no-build"]) == 1
    assert capsys.readouterr().err.endswith("build_lighteval_fixture.py: No space left on device\n")
    assert tree(repo) == before  # conftest.py restored, team-qa.jsonl's data file removed, no temporary file
    assert not list(repo.rglob("*.tmp"))
    assert not (repo / LEV / "data" / "team-qa.jsonl").exists()


@pytest.mark.parametrize(
    ("option", "value"),
    [("--tests-dir", "../outside"), ("--tests-dir", "/abs/tests"), ("--scripts-dir", "a b"), ("--wheels", "..")],
)
def test_a_bad_folder_option_is_one_line_and_nothing_is_created(
    repo: Path, capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    assert init_main(["new-repo", option, value]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"evaljig init: {option} {value!r}: must be a folder inside the repository")
    assert err.count("\n") == 1
    assert not (repo / "new-repo").exists()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], ["python -m pip install --find-links \"$GITHUB_WORKSPACE/wheels\" 'evaljig[lighteval]'", "cache: pip"]),
        (["--installer", "uv", "--tests-dir", "tests"], ["uses: astral-sh/setup-uv@v7", "run: uv sync --locked"]),
        ([*EVALS, "--wheels", "vendor/wheels"], ["working-directory: evals", "--find-links vendor/wheels evaljig\n"]),
    ],
)
def test_the_workflow_installs_as_documented_and_comments_on_pull_requests(
    repo: Path, argv: list[str], expected: list[str]
) -> None:
    assert init_main([*argv, "--no-build"]) == 0
    workflow = (repo / ".github/workflows/lighteval.yml").read_text()
    for text in expected:
        assert text in workflow
    review = 'evaljig review --base "$(git merge-base HEAD "origin/${BASE_REF}")" --markdown > "$RUNNER_TEMP/review.md"'
    assert review in workflow
    assert 'MARKER: "<!-- evaljig-review -->"' in workflow
    assert 'evaljig-report comment merged > "$RUNNER_TEMP/report-comment.md"' in workflow
    assert 'MARKER: "<!-- evaljig-report -->"' in workflow
    assert workflow.count("github.rest.issues.updateComment") == 2
    assert "pip install 'evaljig[lighteval]'" not in workflow  # never from PyPI, where it is not published
    actionlint = shutil.which("actionlint", path=str(Path(sys.executable).parent))
    if actionlint is not None:
        done = subprocess.run(
            [actionlint, ".github/workflows/lighteval.yml"], capture_output=True, text=True, check=False, cwd=repo
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_installer_auto_picks_uv_for_a_uv_project(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "uv.lock").write_text("version = 1\n")
    assert init_main(["--no-build"]) == 0
    assert "run: uv sync --locked" in (repo / ".github/workflows/lighteval.yml").read_text()
    assert "uv add 'evaljig[lighteval]' pytest-cov pytest-split pytest-xdist" in capsys.readouterr().out


def test_regen_without_arguments_in_a_team_repository_names_its_build_script(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``evaljig-fixtures regen`` in a team's repository never writes evaljig's own fixtures there."""
    assert init_main([*OPTIONS, *EVALS, "--no-build"]) == 0
    before = tree(repo)
    capsys.readouterr()
    for argv in (["regen"], ["regen", "--check"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert err.startswith(f"evaljig-fixtures regen: {repo} registers no builders")
        assert err.endswith(
            "; fix: run this repository's build script: python evals/scripts/build_lighteval_fixture.py\n"
        )
    assert tree(repo) == before  # no fixtures/ with evaljig's mini-mmlu


def test_regen_without_arguments_and_no_build_script_says_how_to_get_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["regen"]) == 2
    assert "fix: run your fixtures' build script (`evaljig init` writes scripts/testing/" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
