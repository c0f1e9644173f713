"""``evaljig-report comment``: one pull-request comment, marker first, regressions first, at most 65,000 characters."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaljig_report._cli import main
from evaljig_report._comment import MARKER, MAX_COMMENT, render_comment
from evaljig_report._compare import RunOutcomes, StatusScore, diff

from .report_samples import Populate
from .test_baseline import write_run


def comment(*args: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["comment", *args]) == 0
    return capsys.readouterr().out


def test_the_comment_starts_with_the_marker_and_lists_regressions_first(
    populate: Populate, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write_run(populate, "base", {"dead": "ppppp", "noisy": "ppppp", "healed": "fffff", "old": "fffff"})
    new = write_run(populate, "new", {"dead": "fffff", "noisy": "ppfpp", "healed": "ppppp", "old": "fffff"})
    baseline = tmp_path / "evaljig-baseline.json"
    assert main(["bless", str(base), "-o", str(baseline)]) == 0
    text = comment(str(new), "--baseline", str(baseline), capsys=capsys)
    lines = text.splitlines()
    assert lines[0] == MARKER == "<!-- evaljig-report -->"
    assert lines[1] == "## evaljig: ❌ 2 regressed · 5 cases (2 pass, 3 fail, 0 error, 0 skip)"  # dead, scored
    titles = [line for line in lines if line.startswith("### ")]
    assert titles == [
        "### ❌ Regressed (2)",
        "### ⚠️ Not passing (2)",
        "### ✅ Improved (1)",
        "### 🔀 Changed (not significant, or to/from skip) (1)",
    ]
    dead = "| `tests/test_tools.py::TestCodeTool::dead` (tests) | exact |"
    assert f"{dead} pass (1), 5/5 runs | fail (0), 0/5 runs, p=0.00397 |" in text
    assert "- new: pass^k 1/4 · pass@k 2/4" in text
    assert text == comment(str(new), "--base", str(base), capsys=capsys).replace(
        str(base / "index.json"), str(baseline)
    )
    out = tmp_path / "comment.md"
    assert main(["comment", str(new), "--baseline", str(baseline), "--out", str(out)]) == 0
    assert out.read_text() == text


def test_without_a_base_the_comment_lists_what_does_not_pass(
    populate: Populate, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    write_run(populate, "base", {"ok": "p", "bad": "f"})
    monkeypatch.chdir(tmp_path)  # the default RUN: the newest run under reports/
    text = comment(capsys=capsys)
    assert text.splitlines()[:2] == [MARKER, "## evaljig: ⚠️ 1 not passing · 3 cases (2 pass, 1 fail, 0 error, 0 skip)"]
    assert "| `tests/test_tools.py::TestCodeTool::bad` (tests) | fail | exact |" in text


def test_no_run_to_comment_on_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["comment"]) == 2
    assert capsys.readouterr().err == "evaljig-report: no run folder under reports/; fix: comment RUN\n"


def outcomes(n: int, status: str, source: str) -> RunOutcomes:
    suite = "tests/" + "deeply/" * 20 + "test_tools.py::TestAVeryLongToolEvalClassName"
    cases = {
        ("tests", suite, f"case-{i:05d}-" + "x" * 60): (status, {"exact": StatusScore(status, float(status == "pass"))})
        for i in range(n)
    }
    return RunOutcomes(cases, source)


def test_a_huge_comment_is_cut_to_65000_characters_keeping_regressions_and_saying_what_is_not_shown() -> None:
    base, new = outcomes(3000, "pass", "base"), outcomes(3000, "fail", "new")
    new.cases.update(
        outcomes(1, "pass", "new").cases | {("tests", "x::Y", f"new-{i}"): ("pass", {}) for i in range(500)}
    )
    changes = list(diff(base, new))
    text = render_comment(new, base, changes)
    assert len(text) <= MAX_COMMENT
    assert text.startswith(MARKER + "\n")
    lines = text.splitlines()
    assert lines[1].startswith("## evaljig: ❌ 2999 regressed")
    shown = sum(1 for line in lines if line.startswith("| `tests/"))
    assert 100 < shown < 2999
    assert f"_{2999 - shown} more … not shown (see the full report)_" in text
    assert "### 🆕 Appeared (500)" in text  # a section that did not fit still says what it holds
    assert "_500 more … not shown (see the full report)_" in text
    assert render_comment(new, base, changes) == text


def test_a_small_limit_still_gives_a_valid_comment() -> None:
    base, new = outcomes(50, "pass", "base"), outcomes(50, "fail", "new")
    text = render_comment(new, base, list(diff(base, new)), limit=2000)
    assert len(text) <= 2000
    assert text.startswith(MARKER)
    assert "more … not shown" in text
