"""A case's status is derived from its metrics and errors, never taken from the file; and no case file or
folder tree, however deep or odd, fails the merge: each is a row under ``problems``."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaljig_report import collect, merge
from evaljig_report._cli import main
from evaljig_report._discover import MAX_CASE_DEPTH
from evaljig_report._schema import SCHEMA_VERSION


def metric(name: str, status: str, score: float | None) -> dict[str, Any]:
    return {"name": name, "status": status, "score": score, "reason": f"{name} {status}", "duration_s": 0.1}


def case_doc(case_id: str, status: str, metrics: list[dict[str, Any]], errors: list[str]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "eval",
        "source": {"run": "r1", "session": "tests", "worker": "gw0", "suite": "t.py::T", "case_id": case_id},
        "status": status,
        "case": {"case_id": case_id, "tool_id": "code"},
        "inference": {"status": "success"},
        "metrics": metrics,
        "artifacts": [],
        "errors": errors,
    }


def write(root: Path, case_id: str, text: str) -> Path:
    path = root / "r1" / "tests" / "gw0" / case_id / "case.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    root = tmp_path / "reports"
    write(root, "honest", json.dumps(case_doc("honest", "pass", [metric("exact", "pass", 1.0)], [])))
    return root


def problems(result: Any) -> dict[str, str]:
    return {Path(p.path).parent.name: p.problem for p in result.problems}


@pytest.mark.parametrize(
    ("stated", "metrics", "errors", "derived"),
    [
        ("pass", [metric("exact", "fail", 0.0)], [], "fail"),
        ("pass", [metric("exact", "pass", 1.0)], ["tool raised: boom"], "error"),
        ("pass", [metric("exact", "fail", 0.0)], ["tool raised: boom"], "error"),
        ("fail", [metric("exact", "pass", 1.0), metric("judge", "skip", None)], [], "pass"),
        ("pass", [metric("exact", "skip", None)], [], "skip"),
        ("pass", [], [], "skip"),
        ("error", [metric("exact", "pass", 1.0)], [], "pass"),
    ],
)
def test_the_merge_derives_the_status_and_lists_a_disagreeing_file(
    run: Path, stated: str, metrics: list[dict[str, Any]], errors: list[str], derived: str
) -> None:
    write(run, "liar", json.dumps(case_doc("liar", stated, metrics, errors)))
    result = merge([run], run / "merged")
    assert {r.case_id: r.status for r in result.rows} == {"honest": "pass", "liar": derived}
    assert problems(result) == {
        "liar": f"stated status {stated!r} disagrees with its metrics and errors, which make it {derived!r}: "
        f"merged as {derived!r}"
    }
    index = json.loads((run / "merged" / "index.json").read_text())
    assert {c["case_id"]: c["status"] for c in index["cases"]} == {"honest": "pass", "liar": derived}
    assert index["totals"][derived] == 1 + (derived == "pass")


@pytest.mark.parametrize("stated", [None, "passed", 1])
def test_a_missing_or_unknown_status_is_derived_too(run: Path, stated: object) -> None:
    doc = case_doc("odd", "pass", [metric("exact", "fail", 0.0)], [])
    if stated is None:
        del doc["status"]
    else:
        doc["status"] = stated
    write(run, "odd", json.dumps(doc))
    result = collect([run])
    assert {r.case_id: r.status for r in result.rows} == {"honest": "pass", "odd": "fail"}
    assert problems(result) == {
        "odd": f"stated status {stated!r} disagrees with its metrics and errors, which make it 'fail': merged as 'fail'"
    }


def test_a_duplicate_key_is_a_problem_not_the_last_one_winning(run: Path) -> None:
    text = json.dumps(case_doc("twice", "fail", [metric("exact", "fail", 0.0)], []))
    write(run, "twice", text.replace('"status": "fail"', '"status": "fail", "status": "pass"', 1))
    result = merge([run], run / "merged")
    assert [r.case_id for r in result.rows] == ["honest"]
    assert problems(result) == {"twice": "not valid JSON: duplicate key 'status'"}


@pytest.mark.parametrize("levels", [MAX_CASE_DEPTH, 300, 5_000])
def test_a_case_file_nested_deeper_than_the_bound_is_a_problem_and_the_merge_goes_on(run: Path, levels: int) -> None:
    doc = json.dumps(case_doc("deep", "pass", [metric("exact", "pass", 1.0)], []))
    write(run, "deep", doc.replace('{"status": "success"}', '{"x": ' + "[" * levels + "]" * levels + "}"))
    assert main(["merge", str(run), "-o", str(run / "merged"), "--no-step-summary"]) == 0
    result = collect([run], validate=True)
    assert [r.case_id for r in result.rows] == ["honest"]
    why = f"not valid JSON: nested deeper than {MAX_CASE_DEPTH} levels"
    assert problems(result) == {"deep": why}
    assert why in (run / "merged" / "summary.md").read_text()


def test_a_case_file_as_deep_as_allowed_merges_and_renders(run: Path) -> None:
    doc = json.dumps(case_doc("deepest", "pass", [metric("exact", "pass", 1.0)], []))
    inner = MAX_CASE_DEPTH - 2  # the document and its inference are two levels
    write(run, "deepest", doc.replace('{"status": "success"}', '{"x": ' + "[" * (inner - 1) + "]" * (inner - 1) + "}"))
    result = merge([run], run / "merged", validate=True)
    assert [r.case_id for r in result.rows] == ["deepest", "honest"]
    assert result.problems == []
    assert "deepest" in (run / "merged" / "report.html").read_text()


@pytest.fixture
def deep_tree(run: Path) -> Iterator[Path]:
    """``run/shards/d/d/…/d`` 1,200 folders deep, removed bottom-up afterwards (``shutil.rmtree`` recurses)."""
    top = run / "shards"
    top.mkdir()
    here = Path.cwd()
    os.chdir(top)
    for _ in range(1_200):  # relative steps: each mkdir's own path stays short
        Path("d").mkdir()
        os.chdir("d")
    bottom = Path.cwd()
    os.chdir(here)
    yield bottom
    os.chdir(bottom)
    for path in Path().iterdir():
        shutil.rmtree(path)  # the case folder
    for _ in range(1_200):
        os.chdir("..")
        Path("d").rmdir()
    os.chdir(here)


def test_a_shard_tree_1200_folders_deep_merges_without_a_traceback(
    run: Path, deep_tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(deep_tree, "buried", json.dumps(case_doc("buried", "pass", [metric("exact", "pass", 1.0)], [])))
    assert main(["merge", str(run), "-o", str(run.parent / "merged"), "--no-step-summary"]) == 0
    assert "Traceback" not in capsys.readouterr().err
    result = collect([run])
    assert sorted(r.case_id for r in result.rows) == ["buried", "honest"]
    assert result.problems == []
