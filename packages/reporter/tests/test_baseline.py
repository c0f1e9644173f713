"""``evaljig-report bless`` and ``compare --baseline``: a committed, reviewable baseline in place of a base run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaljig_report import merge
from evaljig_report._cli import main

from .report_samples import Populate, make_record
from .test_gate import repeated


def write_run(populate: Populate, run: str, spec: dict[str, str], root: Path | None = None) -> Path:
    records = [r for case_id, outcomes in spec.items() for r in repeated(case_id, outcomes)]
    records.append(make_record("scored", "judge", score=0.9 if run != "new" else 0.6))
    folder = populate(root, run=run, records=records)
    merge([folder], folder / "merged")
    return folder / "merged"


def compare_json(*args: str, out: Path) -> tuple[int, list[dict[str, Any]]]:
    code = main(["compare", *args, "--fail-on-regression", "--no-step-summary", "--json", str(out)])
    return code, json.loads(out.read_text())


def test_bless_writes_a_canonical_baseline_without_machine_details(
    populate: Populate, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    merged = write_run(populate, "base", {"noisy": "ppfpp", "steady": "p", "broken": "f"})
    out = tmp_path / "evaljig-baseline.json"
    assert main(["bless", str(merged), "--out", str(out)]) == 0
    assert f"blessed 4 cases (4 metrics) of {merged / 'index.json'} into {out}" in capsys.readouterr().out
    text = out.read_text()
    doc = json.loads(text)
    assert text == json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    assert (doc["kind"], doc["version"]) == ("evaljig-baseline", 1)
    cases = {c["case_id"]: c for c in doc["cases"]}
    assert cases["noisy"] == {
        "case_id": "noisy",
        "metrics": {"exact": {"passes": 4, "result": "fail", "runs": 5, "score": 0.8}},
        "session": "tests",
        "status": "fail",
        "suite": "tests/test_tools.py::TestCodeTool",
    }
    assert cases["steady"]["metrics"]["exact"] == {"passes": 1, "result": "pass", "runs": 1, "score": 1.0}
    assert str(tmp_path) not in text
    assert "/base/" not in text  # no run folder
    assert "generated" not in text  # no timestamp


def test_re_blessing_the_same_results_gives_the_same_bytes(populate: Populate, tmp_path: Path) -> None:
    first = write_run(populate, "base", {"a": "ppfpp", "b": "p"})
    again = write_run(populate, "other-run", {"b": "p", "a": "ppfpp"}, root=tmp_path / "elsewhere")
    assert main(["bless", str(first), "-o", str(tmp_path / "one.json")]) == 0
    assert main(["bless", str(again.parent), "-o", str(tmp_path / "two.json")]) == 0  # a run folder, merged on the fly
    assert (tmp_path / "one.json").read_bytes() == (tmp_path / "two.json").read_bytes()


@pytest.mark.parametrize(
    ("base", "new"),
    [
        ({"a": "p", "b": "f", "c": "p"}, {"a": "f", "b": "p", "c": "p"}),  # single runs: today's rules
        ({"a": "ppppp", "b": "ppppp", "c": "fffff"}, {"a": "ppfpp", "b": "fffpf", "c": "ppppp"}),  # repeats
    ],
)
def test_compare_against_a_baseline_equals_compare_against_the_run(
    populate: Populate, tmp_path: Path, base: dict[str, str], new: dict[str, str]
) -> None:
    base_run, new_run = write_run(populate, "base", base), write_run(populate, "new", new)
    baseline = tmp_path / "evaljig-baseline.json"
    assert main(["bless", str(base_run), "-o", str(baseline)]) == 0
    from_run = compare_json(str(base_run), str(new_run), out=tmp_path / "a.json")
    from_baseline = compare_json(str(new_run), "--baseline", str(baseline), out=tmp_path / "b.json")
    positional = compare_json(str(baseline), str(new_run), out=tmp_path / "c.json")
    assert from_run == from_baseline == positional
    assert from_run[0] == 1
    assert {c["case_id"] for c in from_run[1] if c["kind"] == "regressed"} == {
        "scored",
        "a" if len(new["a"]) == 1 else "b",
    }


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(kind="merged"), "kind: not an evaljig baseline (expected kind 'evaljig-baseline')"),
        (
            lambda d: d["cases"][0]["metrics"]["exact"].update(runs="5"),
            "cases/0/metrics/exact/runs: '5' is not of type 'integer'",
        ),
        (lambda d: d["cases"][0]["metrics"]["exact"].update(passes=9), "cases/0/metrics/exact: passes 9 > runs 5"),
        (
            lambda d: d["cases"].append(d["cases"][0]),
            "cases/2: case tests::tests/test_tools.py::TestCodeTool::a is listed twice",
        ),
        (lambda d: d.update(cases=[]), "no cases to compare (an empty baseline)"),
    ],
)
def test_a_bad_baseline_is_one_line_naming_the_file_and_field(
    populate: Populate, tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, message: str
) -> None:
    merged = write_run(populate, "base", {"a": "ppppp"})
    baseline = tmp_path / "evaljig-baseline.json"
    assert main(["bless", str(merged), "-o", str(baseline)]) == 0
    doc = json.loads(baseline.read_text())
    edit(doc)
    baseline.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["compare", str(merged), "--baseline", str(baseline), "--no-step-summary"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"evaljig-report: {baseline}: ")
    assert message in err
    assert len(err.splitlines()) == 1


def test_baseline_and_two_runs_do_not_mix(
    populate: Populate, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    merged = write_run(populate, "base", {"a": "p"})
    assert main(["compare", str(merged), str(merged), "--baseline", str(tmp_path / "x.json")]) == 2
    assert "compare takes --baseline FILE or BASE, not both" in capsys.readouterr().err
    assert main(["compare", str(merged)]) == 2
    assert "compare needs BASE and NEW" in capsys.readouterr().err


def test_bless_of_an_unusable_run_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bless", str(tmp_path / "missing"), "-o", str(tmp_path / "b.json")]) == 2
    assert "not a merged index.json or a reports folder" in capsys.readouterr().err
    assert not (tmp_path / "b.json").exists()
