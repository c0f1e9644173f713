from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaljig_report import merge
from evaljig_report._cli import main

from .report_samples import Populate, make_record


@pytest.fixture
def runs(tmp_path: Path, populate: Populate) -> tuple[Path, Path]:
    base = populate(
        run="base",
        records=[
            make_record("steady"),
            make_record("breaks"),
            make_record("heals", status="fail"),
            make_record("scored", "judge", score=0.9),
            make_record("gone"),
        ],
    )
    new = populate(
        run="new",
        records=[
            make_record("steady"),
            make_record("breaks", status="fail", reason="wrong answer"),
            make_record("heals"),
            make_record("scored", "judge", score=0.6),
            make_record("fresh"),
            make_record("steady", "judge"),
        ],
    )
    merge([base], base / "merged")
    return base, new


def test_compare_lists_every_kind_of_change(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base, new = runs
    out_json = base.parent / "changes.json"
    assert main(["compare", str(base), str(new), "--json", str(out_json)]) == 0
    changes = {(c["kind"], c["case_id"], c["metric"]) for c in json.loads(out_json.read_text())}
    assert changes == {
        ("regressed", "breaks", "exact"),
        ("regressed", "scored", "judge"),
        ("improved", "heals", "exact"),
        ("appeared", "fresh", "exact"),
        ("appeared", "steady", "judge"),
        ("disappeared", "gone", "exact"),
    }
    out = capsys.readouterr().out
    assert out.startswith("## evaljig compare: 2 regressed · 1 improved · 2 appeared · 1 disappeared · 0 changed")
    assert "| exact | pass (1) | fail (0) |" in out


def test_fail_on_regression_exits_non_zero(runs: tuple[Path, Path]) -> None:
    base, new = runs
    assert main(["compare", str(base), str(new), "--fail-on-regression"]) == 1
    assert main(["compare", str(base), str(base), "--fail-on-regression"]) == 0


def test_tolerance_ignores_small_score_drops(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base, new = runs
    main(["compare", str(base), str(new), "--tolerance", "0.5"])
    assert "1 regressed" in capsys.readouterr().out


def test_unusable_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(tmp_path / "nope"), str(tmp_path)]) == 2
    assert "not a merged index.json" in capsys.readouterr().err


GOOD_ROW = {"session": "s", "suite": "t.py::T", "case_id": "c", "status": "pass", "metrics": []}


@pytest.mark.parametrize(
    ("cases", "message"),
    [
        pytest.param({"c": 1}, "cases: expected a list of case rows, found dict", id="not-a-list"),
        pytest.param([1], "cases[0]: expected a case row (an object), found 1", id="not-a-row"),
        pytest.param(
            [{**GOOD_ROW, "metrics": None}], "cases[0]: metrics: expected a list, found None", id="no-metrics"
        ),
        pytest.param(
            [GOOD_ROW, {**GOOD_ROW, "status": "great"}],
            "cases[1]: status: expected error or fail or pass or skip, found 'great'",
            id="bad-status",
        ),
        pytest.param(
            [{**GOOD_ROW, "metrics": [{"name": "m", "status": "pass", "score": "high"}]}],
            "cases[0]: metrics[0].score: expected a number or null, found 'high'",
            id="bad-score",
        ),
        pytest.param(
            [{**GOOD_ROW, "metrics": [{"status": "pass", "score": 1}]}],
            "cases[0]: metrics[0].name: expected a string, found None",
            id="no-metric-name",
        ),
        pytest.param([], "no cases to compare", id="empty"),
    ],
)
def test_a_malformed_index_is_unusable_input(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str], cases: object, message: str
) -> None:
    base, _ = runs
    bad = base.parent / "bad.json"
    bad.write_text(json.dumps({"kind": "merged", "cases": cases}))
    assert main(["compare", str(base), str(bad), "--fail-on-regression"]) == 2
    assert capsys.readouterr().err == f"evaljig-report: {bad}: {message}\n"


def test_a_folder_without_usable_cases_is_unusable_input(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new = runs
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["compare", str(base), str(empty), "--fail-on-regression"]) == 2
    assert capsys.readouterr().err == f"evaljig-report: {empty}: no cases to compare\n"
    for case_file in new.rglob("case.json"):
        case_file.write_text("{")  # every file of NEW is corrupt
    assert main(["compare", str(new), str(base), "--fail-on-regression"]) == 2
    assert capsys.readouterr().err == f"evaljig-report: {new}: no cases to compare (5 files could not be used)\n"


@pytest.mark.parametrize("tolerance", ["-0.1", "nan", "inf", "lots"])
def test_tolerance_must_be_a_finite_number_not_below_zero(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tolerance: str
) -> None:
    base, new = runs
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", str(base), str(new), "--tolerance", tolerance])
    assert exit_info.value.code == 2
    assert f"argument --tolerance: {tolerance!r}: must be a finite number >= 0" in capsys.readouterr().err


def test_a_disappeared_case_fails_the_gate_unless_allowed(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, _ = runs
    only_gone_missing = base.parent / "same-but-gone"
    new = json.loads((base / "merged" / "index.json").read_text())
    new["cases"] = [row for row in new["cases"] if row["case_id"] != "gone"]
    only_gone_missing.write_text(json.dumps(new))
    assert main(["compare", str(base), str(only_gone_missing), "--fail-on-regression"]) == 1
    captured = capsys.readouterr()
    assert "### Disappeared (1)" in captured.out
    assert captured.err == "evaljig-report: compare failed: disappeared (see the table above)\n"
    assert main(["compare", str(base), str(only_gone_missing), "--fail-on-regression", "--allow-missing"]) == 0


def test_a_case_that_turned_error_without_metrics_fails_the_gate(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, _ = runs
    index = json.loads((base / "merged" / "index.json").read_text())
    for row in index["cases"]:
        if row["case_id"] == "steady":
            row.update(status="error", metrics=[], errors=["worker gw1 crashed while running it"])
    crashed = base.parent / "crashed.json"
    crashed.write_text(json.dumps(index))
    assert main(["compare", str(base), str(crashed), "--fail-on-regression", "--allow-missing"]) == 1
    assert "| (case) | pass | error |" in capsys.readouterr().out


def test_compare_writes_its_table_to_the_step_summary(
    runs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new = runs
    step = tmp_path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    main(["compare", str(base), str(new)])
    assert step.read_text() == capsys.readouterr().out
    assert step.read_text().startswith("## evaljig compare: 2 regressed")


def test_a_step_summary_in_a_missing_folder_is_a_warning(
    runs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new = runs
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "no-such-folder" / "step.md"))
    assert main(["compare", str(base), str(new)]) == 0
    assert main(["merge", str(base)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert (
        err
        == [
            f"evaljig-report: warning: cannot append to GITHUB_STEP_SUMMARY "
            f"{str(tmp_path / 'no-such-folder' / 'step.md')!r}: No such file or directory"
        ]
        * 2
    )
