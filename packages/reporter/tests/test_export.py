"""``evaljig-report export --format eee``: the merged run in the Every Eval Ever schema, validated with jsonschema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from evaljig_report import merge
from evaljig_report._cli import main
from evaljig_report._export import eee_schema

from .report_samples import Populate, make_record
from .test_gate import repeated

SCHEMA = Path(__file__).resolve().parents[1] / "src" / "evaljig_report" / "schemas" / "eee" / "eval.schema.json"


@pytest.fixture
def merged(populate: Populate, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # 2026-01-01T00:00:00Z
    records = [
        *repeated("noisy", "ppfpp"),
        *repeated("steady", "ppppp"),
        make_record("judged", "judge", score=0.25, status="fail"),
        make_record("judged2", "judge", score=0.75),
        make_record("skipped", "judge", status="skip"),
    ]
    run = populate(run="r", records=records)
    merge([run], run / "merged")
    return run / "merged"


def export(merged: Path, tmp_path: Path, *extra: str) -> dict[str, object]:
    out = tmp_path / "eee.json"
    assert main(["export", str(merged), "--format", "eee", "--out", str(out), *extra]) == 0
    doc: dict[str, object] = json.loads(out.read_text())
    return doc


def test_the_export_validates_against_the_vendored_every_eval_ever_schema(merged: Path, tmp_path: Path) -> None:
    doc = export(merged, tmp_path, "--model-id", "openai/gpt-4o-mini", "--organization", "team")
    schema = json.loads(SCHEMA.read_text())
    assert schema == eee_schema()
    assert schema["version"] == "0.3.0"
    Draft7Validator.check_schema(schema)
    assert sorted(e.message for e in Draft7Validator(schema).iter_errors(doc)) == []
    assert doc["schema_version"] == "0.3.0"
    assert doc["retrieved_timestamp"] == "1767225600"
    assert doc["evaluation_id"] == "evaljig/openai/gpt-4o-mini/1767225600"
    assert doc["source_metadata"] == {
        "evaluator_relationship": "first_party",
        "source_name": "evaljig",
        "source_organization_name": "team",
        "source_type": "evaluation_run",
    }


def test_pass_rates_mean_scores_and_pass_k_per_suite_and_metric(merged: Path, tmp_path: Path) -> None:
    doc = export(merged, tmp_path)
    results = {r["evaluation_result_id"]: r for r in doc["evaluation_results"]}  # type: ignore[attr-defined]
    suite = "tests/tests/test_tools.py::TestCodeTool"
    assert sorted(results) == [
        f"{suite}/exact/mean_score",
        f"{suite}/exact/pass_at_k",
        f"{suite}/exact/pass_hat_k",
        f"{suite}/exact/pass_rate",
        f"{suite}/judge/mean_score",
        f"{suite}/judge/pass_rate",
    ]
    rate = results[f"{suite}/exact/pass_rate"]
    assert rate["score_details"]["score"] == 0.5  # noisy failed a run (pass^k), steady passed
    assert rate["score_details"]["uncertainty"] == {
        "num_samples": 2,
        "standard_error": {"method": "analytic", "value": 0.3535533905932738},
    }
    assert results[f"{suite}/exact/pass_at_k"]["score_details"]["score"] == 1.0
    assert results[f"{suite}/exact/pass_at_k"]["metric_config"]["metric_parameters"] == {"k": 5}
    assert results[f"{suite}/exact/pass_hat_k"]["metric_config"]["metric_name"] == "pass^5"
    judge = results[f"{suite}/judge/pass_rate"]["score_details"]
    assert (judge["score"], judge["details"]) == (0.5, {"cases": "3", "passed": "1", "skipped": "1"})
    assert results[f"{suite}/judge/mean_score"]["score_details"]["score"] == 0.5  # the skipped case's score: left out


def test_the_same_merged_run_exports_the_same_bytes(
    merged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["export", str(merged), "--format", "eee"]) == 0
    first = capsys.readouterr().out
    assert main(["export", str(merged / "index.json"), "--format", "eee"]) == 0
    assert capsys.readouterr().out == first
    assert str(tmp_path) not in first


def test_an_unusable_run_and_an_unknown_format_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(tmp_path / "missing"), "--format", "eee"]) == 2
    assert capsys.readouterr().err.startswith(f"evaljig-report: {tmp_path / 'missing'}: not a merged index.json")
    with pytest.raises(SystemExit) as exit_:
        main(["export", str(tmp_path), "--format", "helm"])
    assert exit_.value.code == 2
    assert "invalid choice: 'helm'" in capsys.readouterr().err
