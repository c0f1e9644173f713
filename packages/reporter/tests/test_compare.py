from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaljig_report import merge
from evaljig_report.cli import main

from .conftest import Populate, make_record


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
