"""``evaljig init`` (``evaljig-fixtures init``): the LEV scaffold in a repository, never overwriting without --force.

The scaffolded suite's lighteval cases run in ``nox -s adoption`` (the real lighteval); here the
layout, the options, the refusals, the workflow (actionlint) and the lighteval-free case LEV-004.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evaljig_config import load_provider_spec
from evaljig_fixtures import init_main, load_dataset_package
from evaljig_fixtures._cli import main

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
    assert 'DATASET = FIXTURES / "datasets" / "team-qa.zip"' in (repo / LEV / "lev_paths.py").read_text()


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
    assert "-m lighteval --no-cov" in workflow
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
