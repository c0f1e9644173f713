"""``regen`` runs a team's own builders: named in its pyproject.toml or by entry point, byte-stable, --check."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from evaljig_fixtures import BuildContext, cassette_builder, regen_main
from evaljig_fixtures._cli import main

BUILDERS_MODULE = """
from pathlib import Path
from evaljig_fixtures import Builder, DatasetSource, config_golden_builder, dataset_package_builder
from evaljig_fixtures import provider_builder, write_output

HERE = Path(__file__).resolve().parent
SPEC = {{
    "name": "acme", "base_url": "http://127.0.0.1:8000/v1", "model": "openai/acme-small",
    "api_key_env": "ACME_TOKEN", "retry": {{"attempts": 2, "sleep": 0.0, "multiplier": 1.0}},
}}
ROWS = [
    {{"question": "2 + 2 = ?", "choices": ["3", "4"], "answer": "B"}},
    {{"question": "Sky colour?", "choices": ["blue", "green", "red"], "answer": "A"}},
]

def everything():
    return [
        provider_builder("providers/acme.json", SPEC),
        dataset_package_builder("datasets/acme.zip", DatasetSource(HERE / "rows.jsonl", name="acme")),
        dataset_package_builder("datasets/inline.zip", DatasetSource(ROWS, name="inline")),
        config_golden_builder("configs/expected-config.yaml", provider="providers/acme.json"),
    ]

NOTE = Builder(name="note", outputs=("note.txt",), build=lambda out, ctx: [write_output(out, "note.txt", b"{note}")])
"""


def project(root: Path, *, table: str, note: str = "hello\\n") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "team_builders.py").write_text(BUILDERS_MODULE.format(note=note), encoding="utf-8")
    rows = [{"question": "Best fruit?", "choices": ["apple", "pear"], "answer": 1}]
    (root / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (root / "pyproject.toml").write_text(textwrap.dedent(table), encoding="utf-8")
    return root


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = project(
        tmp_path / "backend",
        table="""
        [project]
        name = "acme-backend"
        [tool.evaljig]
        builders = ["team_builders:everything", "team_builders:NOTE"]
        fixtures = "tests/lighteval/fixtures"
        """,
    )
    monkeypatch.chdir(root)
    monkeypatch.delitem(sys.modules, "team_builders", raising=False)
    return root


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_regen_builds_the_projects_own_fixtures_then_check_is_clean(
    team: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["regen"]) == 0
    fixtures = team / "tests" / "lighteval" / "fixtures"
    assert sorted(files(fixtures)) == [
        "configs/expected-config.yaml", "datasets/acme.zip", "datasets/inline.zip", "note.txt", "providers/acme.json",
    ]  # fmt: skip
    assert "model_name: openai/acme-small" in (fixtures / "configs" / "expected-config.yaml").read_text()
    first = files(fixtures)
    capsys.readouterr()

    assert main(["regen", "--check"]) == 0
    assert "regen --check: clean: 5 builder(s), 5 file(s)" in capsys.readouterr().out
    assert main(["regen"]) == 0
    assert files(fixtures) == first  # byte-stable


def test_check_names_the_drifted_file_of_a_team_builder(team: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["regen"]) == 0
    (team / "tests" / "lighteval" / "fixtures" / "note.txt").write_text("edited by hand\n")
    capsys.readouterr()
    assert main(["regen", "--check"]) == 1
    out = capsys.readouterr().out
    assert "1 drifted file(s)" in out
    assert "note.txt" in out


def test_a_bad_reference_is_one_line_naming_the_pyproject_and_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, table='[tool.evaljig]\nbuilders = ["team_builders:MISSING"]\n')
    monkeypatch.chdir(root)
    monkeypatch.delitem(sys.modules, "team_builders", raising=False)
    assert main(["regen", "--check"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        f"evaljig-fixtures regen: {root / 'pyproject.toml'}: [tool.evaljig] builders[0]: team_builders has no "
        "attribute MISSING"
    )


def test_builders_registered_by_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path / "site", table="")
    (root / "pyproject.toml").unlink()
    dist = root / "acme_fixtures-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-fixtures\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[evaljig.builders]\nnote = team_builders:NOTE\n")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delitem(sys.modules, "team_builders", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)

    assert main(["regen", "--list"]) == 0
    assert capsys.readouterr().out.startswith("note ")
    assert main(["regen"]) == 0
    assert (work / "fixtures" / "note.txt").read_bytes() == b"hello\n"


def test_regen_main_runs_a_build_script_with_check(
    team: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(team))
    import team_builders  # type: ignore[import-not-found]

    builders = [*team_builders.everything(), team_builders.NOTE]
    out = team / "fx"
    assert regen_main(builders, [], fixtures=out) == 0
    assert regen_main(builders, ["--check"], fixtures=out) == 0
    (out / "datasets" / "inline.zip").write_bytes(b"not a zip")
    assert regen_main(builders, ["--check"], fixtures=out) == 1
    assert regen_main(builders, ["--only", "nope"], fixtures=out) == 2
    assert "--only: unknown builder(s) nope" in capsys.readouterr().err


def test_api_key_env_without_upstream_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert regen_main([], ["--api-key-env", "ACME_TOKEN"], fixtures=tmp_path) == 2
    assert "--api-key-env needs --upstream" in capsys.readouterr().err


def test_a_committed_recording_is_carried_over_without_an_upstream(tmp_path: Path) -> None:
    """A plain regen never replaces your model's recorded answers with a local gateway's."""
    committed, staging = tmp_path / "fixtures", tmp_path / "staging"
    recorded = {"cassettes/qa.yaml": b"interactions: []\nversion: 1\n", "configs/recorded.txt": b"| task | em |\n"}
    for relative, data in recorded.items():
        (committed / relative).parent.mkdir(parents=True, exist_ok=True)
        (committed / relative).write_bytes(data)
    builder = cassette_builder(
        "cassettes/qa.yaml", provider="providers/p.json", dataset="datasets/qa.zip", stdout="configs/recorded.txt"
    )
    assert builder.outputs == ("cassettes/qa.yaml", "configs/recorded.txt", "cassettes/qa.recorded-for.json")
    assert builder.requires == frozenset({"lighteval"})

    written = builder.build(staging, BuildContext(committed=committed, staging=staging, lighteval=True))

    assert {p.relative_to(staging).as_posix(): p.read_bytes() for p in written} == recorded


def test_a_first_build_starts_lighteval_once_for_the_cassette_and_the_cli_golden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cassette builder, listed first, records the ephemeral gateway's run; the CLI golden takes its table.

    lighteval is the boundary here (the LEV session runs the real one): a stand-in sends one real request
    through the base URL it is given, so the recording gateway records it, and counts its runs.
    """
    import httpx

    from evaljig_fixtures import DatasetSource, cli_stdout_golden_builder, dataset_package_builder, provider_builder

    runs: list[str] = []

    def lighteval_stand_in(spec: Any, tasks: str, **_: Any) -> Any:
        runs.append(spec.base_url)
        body = {"model": spec.model, "messages": [{"role": "user", "content": "2 + 2 = ?"}]}
        httpx.post(f"{spec.base_url}/chat/completions", json=body, timeout=10).raise_for_status()
        return SimpleNamespace(stdout_table=f"| {tasks} | em | 0.5 |\n")

    monkeypatch.setattr("evaljig_fixtures._builder_factories.run_cli", lighteval_stand_in)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"question": "2 + 2 = ?", "choices": ["3", "4"], "answer": "B"}) + "\n")
    spec = {"name": "acme", "base_url": "http://127.0.0.1:8000/v1", "model": "openai/acme", "api_key_env": "ACME_KEY"}
    builders = [
        provider_builder("providers/acme.json", spec),
        dataset_package_builder("datasets/acme.zip", DatasetSource(rows, name="acme")),
        cassette_builder(
            "cassettes/acme.yaml", provider="providers/acme.json", dataset="datasets/acme.zip",
            stdout="configs/recorded.txt",
        ),
        cli_stdout_golden_builder("configs/expected.txt", provider="providers/acme.json", dataset="datasets/acme.zip"),
    ]  # fmt: skip

    def build(committed: Path, staging: Path) -> dict[str, bytes]:
        ctx = BuildContext(committed=committed, staging=staging, lighteval=True)
        written = [path for builder in builders for path in builder.build(staging, ctx)]
        return {p.relative_to(staging).as_posix(): p.read_bytes() for p in written}

    first = build(tmp_path / "empty", tmp_path / "first")
    assert len(runs) == 1, runs  # one run, through the recording gateway
    assert first["configs/expected.txt"] == first["configs/recorded.txt"] == b"| acme|0 | em | 0.5 |\n"
    assert b"2 + 2 = ?" in first["cassettes/acme.yaml"]

    second = build(tmp_path / "first", tmp_path / "second")  # the recording committed: carried over
    assert len(runs) == 2, runs  # the golden's own run, against the ephemeral gateway directly
    assert second == first
