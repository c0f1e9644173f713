"""A recording knows what it was recorded for, and ``--check`` reports it stale before anything runs.

The cassette builder writes ``<cassette>.recorded-for.json`` beside the cassette: the inputs that
shape its requests (model, generation parameters, dataset rows, task module, lighteval version).
``regen --check`` recomputes them from this run's provider and dataset, without lighteval, and a
changed temperature is drift naming the field and the command that re-records.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaljig_fixtures import DatasetSource, cassette_builder, dataset_package_builder, provider_builder, regen_main
from evaljig_fixtures._cassettes import recorded_for, sidecar_path, stale_fields

SPEC: dict[str, Any] = {
    "name": "acme", "base_url": "http://127.0.0.1:8000/v1", "model": "openai/acme-small", "api_key_env": "ACME_TOKEN",
    "generation": {"temperature": 0.0, "max_new_tokens": 8, "seed": 0},
}  # fmt: skip
ROWS = [{"question": "2 + 2 = ?", "choices": ["3", "4"], "answer": "B"}]
CASSETTE = "cassettes/acme.yaml"


def builders(spec: dict[str, Any]) -> list[Any]:
    return [
        provider_builder("providers/acme.json", spec, name="provider"),
        dataset_package_builder("datasets/acme.zip", DatasetSource(ROWS, name="acme"), builder_name="dataset"),
        cassette_builder(CASSETTE, provider="providers/acme.json", dataset="datasets/acme.zip", name="cassette"),
    ]


@pytest.fixture
def recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A fixtures folder as after a recording: provider, dataset, a cassette of 12 requests and its sidecar."""
    fixtures = tmp_path / "fixtures"
    assert regen_main(builders(SPEC)[:2], ["--out", str(fixtures)], fixtures=fixtures) == 0
    from evaljig_config import load_provider_spec
    from evaljig_fixtures import load_dataset_package

    spec = load_provider_spec(fixtures / "providers/acme.json")
    package = load_dataset_package(fixtures / "datasets/acme.zip")
    (fixtures / "cassettes").mkdir()
    (fixtures / CASSETTE).write_bytes(b"interactions: []\nversion: 1\n")
    summary = recorded_for(spec, package, requests=12, builder="cassette")
    sidecar_path(fixtures / CASSETTE).write_bytes(json.dumps(summary, indent=2).encode() + b"\n")
    capsys.readouterr()
    return fixtures


def test_an_unchanged_recording_is_clean(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert regen_main(builders(SPEC), ["--check", "--out", str(recorded), "--no-lighteval"], fixtures=recorded) == 0
    assert "stale" not in capsys.readouterr().out


def test_a_changed_temperature_is_stale_before_anything_runs(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = {**SPEC, "generation": {**SPEC["generation"], "temperature": 0.3}}
    argv = ["--check", "--out", str(recorded), "--no-lighteval"]
    code = regen_main(builders(spec), argv, fixtures=recorded, command="python ../scripts/build.py")
    out = capsys.readouterr().out
    assert code == 1
    assert (
        f"stale    {CASSETTE}: 12 recorded requests: generation_parameters.temperature 0.0 → 0.3; "
        "re-record: python ../scripts/build.py --only cassette --upstream URL --api-key-env ACME_TOKEN"
    ) in out.splitlines()


def test_match_ignore_leaves_a_field_out(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = {**SPEC, "generation": {**SPEC["generation"], "temperature": 0.3}}
    argv = ["--check", "--out", str(recorded), "--no-lighteval", "--match-ignore", "temperature"]
    assert regen_main(builders(spec), argv, fixtures=recorded) == 1  # the provider file itself changed
    out = capsys.readouterr().out
    assert "changed  providers/acme.json" in out
    assert "stale" not in out


def test_a_recording_without_a_sidecar_is_reported_not_failed(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sidecar_path(recorded / CASSETTE).unlink()
    assert regen_main(builders(SPEC), ["--check", "--out", str(recorded), "--no-lighteval"], fixtures=recorded) == 0
    out = capsys.readouterr().out
    assert f"note     {CASSETTE}: recorded for unknown inputs; re-record to enable staleness checks" in out


def test_stale_fields_by_path() -> None:
    old = {"model": "a", "generation_parameters": {"temperature": 0.0, "seed": 0}, "lighteval": "0.13.0"}
    new = {"model": "b", "generation_parameters": {"temperature": 0.0}, "lighteval": None}
    assert stale_fields(old, new, frozenset()) == ['model "a" → "b"', "generation_parameters.seed 0 → (absent)"]
    assert stale_fields(old, new, frozenset({"model", "seed"})) == []


def test_the_re_record_command_is_the_build_script_run_from_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaljig_fixtures._regen_command import script_command

    (tmp_path / "backend").mkdir()
    monkeypatch.chdir(tmp_path / "backend")
    assert script_command(str(tmp_path / "scripts" / "build.py")) == "python ../scripts/build.py"
    assert script_command("/venv/bin/evaljig-fixtures") == "evaljig-fixtures regen"


HARNESS_SUITE = """
import pytest


@pytest.mark.evaljig_cassette("fixtures/cassettes/acme.yaml")
def test_replays_the_recording(lev_provider, lev_dataset, lev_trace):
    raise AssertionError("lighteval would run here")
"""


def test_the_lev_harness_fails_a_stale_recording_before_anything_runs(
    recorded: Path, pytester: pytest.Pytester
) -> None:
    """The LEV harness compares the marked cassette's recorded-for file with ``lev_provider``/``lev_dataset``."""
    fixtures = pytester.path / "fixtures"
    fixtures.mkdir()
    for relative in ("providers/acme.json", "datasets/acme.zip", CASSETTE, "cassettes/acme.recorded-for.json"):
        (fixtures / relative).parent.mkdir(parents=True, exist_ok=True)
        (fixtures / relative).write_bytes((recorded / relative).read_bytes())
    pytester.makeini(
        "[pytest]\nlev_provider = fixtures/providers/acme.json\nlev_dataset = fixtures/datasets/acme.zip\n"
    )
    pytester.makepyfile(test_team=HARNESS_SUITE)
    fresh = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    fresh.assert_outcomes(failed=1)
    fresh.stdout.fnmatch_lines(["*lighteval would run here*"])  # an unchanged recording: the test runs

    changed = json.loads((fixtures / "providers/acme.json").read_text())
    changed["generation"]["temperature"] = 0.3
    (fixtures / "providers/acme.json").write_text(json.dumps(changed))
    stale = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rE")
    stale.assert_outcomes(errors=1)  # at set-up: lighteval never starts
    stale.stdout.fnmatch_lines(
        [
            "*stale recording acme.yaml: 12 recorded requests: generation_parameters.temperature 0.0 → 0.3; "
            "re-record: your fixture build script with --only cassette --upstream URL --api-key-env ACME_TOKEN*"
        ]
    )
    assert "lighteval would run here" not in stale.stdout.str()
