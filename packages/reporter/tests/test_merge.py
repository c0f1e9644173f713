"""Merging workers, sessions and shard folders: nothing lost, nothing doubled, problems listed."""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from evaljig_report import collect, merge
from evaljig_report._cli import main
from evaljig_report._details import case_detail

from .report_samples import CSV, PNG, Populate, b64, make_record


@pytest.fixture
def shards(tmp_path: Path, populate: Populate, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Two CI shards as downloaded artifacts: shard-1 ran gw0+gw1 of `tests`, shard-2 `tests` gw0 and `lighteval`."""
    monkeypatch.chdir(tmp_path)
    s1, s2 = tmp_path / "shard-1", tmp_path / "shard-2"
    plot = [{"name": "../plot.png", "mime_type": "image/png", "base64": b64(PNG)}]
    populate(s1, worker="gw0", records=[make_record("add", artifacts=plot), make_record("add", "judge")])
    populate(s1, worker="gw1", records=[make_record("sub", status="fail", reason="expected 1, got 2")])
    populate(
        s1,
        worker="gw1",
        records=[make_record("csv", artifacts=[{"name": "t.csv", "mime_type": "text/csv", "base64": b64(CSV)}])],
    )
    populate(s2, worker="gw0", records=[make_record("mul", status="skip", reason="no sandbox")])
    populate(s2, worker="gw0", records=[make_record("div", error="ZeroDivisionError")])
    # the same case id in another session is another case
    populate(s2, session="lighteval", worker="main", records=[make_record("add", "accuracy", score=0.75)])
    return [Path("shard-1"), Path("shard-2")]


def keys(index: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["session"], c["case_id"], c["status"]) for c in index["cases"]]


def normalized(index: dict[str, Any]) -> dict[str, Any]:
    """The merged index without what changes from run to run."""
    index = {**index, "generated_at": "<generated_at>"}
    index["cases"] = [{**c, "duration_s": "<duration>"} for c in index["cases"]]
    return index


def test_merge_keeps_every_case_once(shards: list[Path], golden: Any) -> None:
    result = merge(shards, Path("merged"))
    index = json.loads(Path("merged/index.json").read_text())
    assert keys(index) == [
        ("lighteval", "add", "pass"),
        ("tests", "add", "pass"),
        ("tests", "csv", "pass"),
        ("tests", "div", "error"),
        ("tests", "mul", "skip"),
        ("tests", "sub", "fail"),
    ]
    assert index["totals"] == {"cases": 6, "pass": 3, "fail": 1, "error": 1, "skip": 1}
    assert result.problems == []
    assert golden == normalized(index)


def test_a_shard_given_twice_is_merged_once(shards: list[Path]) -> None:
    once = merge(shards, Path("once"))
    twice = merge([*shards, shards[0], Path("shard-1/run1/tests/gw0")], Path("twice"))
    assert [r.key for r in twice.rows] == [r.key for r in once.rows]
    assert twice.duplicates == 4
    assert twice.files_read == once.files_read + 4


@pytest.mark.parametrize("first_worker_runs", ["exact", "judge"])
def test_a_case_split_across_workers_joins_its_metrics_in_name_order(
    tmp_path: Path, populate: Populate, first_worker_runs: str
) -> None:
    status = {"exact": "pass", "judge": "fail"}
    other = "judge" if first_worker_runs == "exact" else "exact"
    run = populate(worker="gw0", records=[make_record("c", first_worker_runs, status[first_worker_runs])])
    populate(worker="gw1", records=[make_record("c", other, status[other])])
    result = merge([run], tmp_path / "merged")
    assert len(result.rows) == 1
    assert [m.name for m in result.rows[0].metrics] == ["exact", "judge"]  # whichever worker ran which
    assert result.rows[0].status == "fail"
    assert result.duplicates == 0
    assert result.problems == []


@pytest.fixture
def conflicting(tmp_path: Path, populate: Populate, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The same case in two shards with different results for `exact`, plus a copy of the first shard."""
    monkeypatch.chdir(tmp_path)
    populate(Path("a"), records=[make_record("c1", "exact", "pass"), make_record("c2")])
    populate(Path("b"), records=[make_record("c1", "exact", "fail", reason="wrong answer"), make_record("c2")])
    shutil.copytree("a", "a-copy")
    return [Path("a"), Path("b"), Path("a-copy")]


@pytest.mark.parametrize("order", [(0, 1, 2), (1, 0, 2), (2, 1, 0)])
def test_a_conflict_keeps_the_worst_result_in_any_order_and_is_listed(
    conflicting: list[Path], order: tuple[int, ...]
) -> None:
    result = merge([conflicting[i] for i in order], Path("merged"))
    c1 = next(r for r in result.rows if r.case_id == "c1")
    assert (c1.status, [(m.name, *m.outcome) for m in c1.metrics]) == ("fail", [("exact", "fail", 0.0, "wrong answer")])
    assert result.duplicates == 3  # the copy of c1's pass and two copies of c2: identical content only
    files = [Path(p).relative_to(Path.cwd()).as_posix() for p in c1.paths]
    assert [f.split("/")[0] for f in files] == ["a-copy", "a", "b"]  # sorted, whatever the input order
    assert [(p.path, p.problem) for p in result.problems] == [
        (
            files[0],
            "metric 'exact' has different results in this case's files (fail (score 0): wrong answer; "
            f"pass (score 1)); kept the worst: fail (score 0): wrong answer; other files: {files[1]}, {files[2]}",
        )
    ]


def test_the_drill_down_shows_the_kept_result_of_a_conflict(conflicting: list[Path]) -> None:
    row = next(r for r in collect(conflicting).rows if r.case_id == "c1")
    detail = case_detail(row, [f"file{n}/case.json" for n in range(len(row.paths))])
    assert [(m["name"], m["status"], m["reason"]) for m in detail["metrics"]] == [("exact", "fail", "wrong answer")]


def test_merge_output_is_byte_identical_in_any_input_order(
    shards: list[Path], conflicting: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1735689600")
    inputs = [*shards, *conflicting, Path("missing")]
    merge(inputs, Path("out-a"))
    merge(list(reversed(inputs)), Path("out-b"))
    for name in ("index.json", "summary.md", "junit.xml", "report.html"):
        assert (Path("out-a") / name).read_bytes() == (Path("out-b") / name).read_bytes(), name
    index = json.loads(Path("out-a/index.json").read_text())
    assert index["generated_at"] == "2025-01-01T00:00:00+00:00"


@pytest.mark.parametrize("value", ["yesterday", "1e9", "99999999999999999999"])
def test_a_malformed_source_date_epoch_is_refused(
    shards: list[Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", value)
    assert main(["merge", *map(str, shards), "-o", "out", "--no-step-summary"]) == 2
    assert f"SOURCE_DATE_EPOCH must be whole seconds since 1970-01-01 UTC, not {value!r}" in capsys.readouterr().err
    assert not Path("out").exists()


def test_unreadable_and_partial_files_are_listed_not_fatal(shards: list[Path], golden: Any) -> None:
    bad = Path("shard-2/run1/tests/gw9")
    (bad / "truncated").mkdir(parents=True)
    (bad / "truncated/case.json").write_text('{"schema_version": 1, "source": {"ses')
    (bad / "empty").mkdir()
    (bad / "empty/case.json").write_text("")
    (bad / "wrong").mkdir()
    (bad / "wrong/case.json").write_text(json.dumps({"schema_version": 99}))
    (bad / "half-written").mkdir()
    (bad / "half-written/.case.json.4242.tmp").write_text("{")
    result = merge([*shards, Path("missing-shard")], Path("merged"))
    assert len(result.rows) == 6
    problems = {p.path: p.problem for p in result.problems}
    assert sorted(problems) == [
        "missing-shard",
        "shard-2/run1/tests/gw9/empty/case.json",
        "shard-2/run1/tests/gw9/half-written/.case.json.4242.tmp",
        "shard-2/run1/tests/gw9/truncated/case.json",
        "shard-2/run1/tests/gw9/wrong/case.json",
    ]
    index = json.loads(Path("merged/index.json").read_text())
    assert [p["path"] for p in index["problems"]] == [p.path for p in result.problems]
    summary = Path("merged/summary.md").read_text()
    assert "### Problems (5 files could not be used)" in summary
    assert golden == summary


def test_a_case_file_that_cannot_be_read_is_listed(shards: list[Path]) -> None:
    odd = Path("shard-1/run1/tests/gw0/odd/case.json")
    odd.mkdir(parents=True)  # a folder where the file should be: open() works, read() fails
    (odd / "case.json").mkdir()
    result = merge(shards, Path("merged"))
    assert len(result.rows) == 6
    assert [(p.path, p.problem.split(":")[0]) for p in result.problems] == [(odd.as_posix(), "unreadable")]


@pytest.mark.parametrize("file", ["p\u0000.png", "../outside.png", "sub/p.png", ".hidden.png", 7])
def test_an_artifact_file_that_is_not_a_plain_name_is_a_problem_not_a_crash(shards: list[Path], file: object) -> None:
    victim = sorted(Path("shard-1").rglob("case.json"))[0]
    doc = json.loads(victim.read_text())
    doc["artifacts"] = [{"name": "p.png", "mime_type": "image/png", "status": "written", "file": file, "bytes": 1}]
    victim.write_text(json.dumps(doc))
    result = merge(shards, Path("merged"))
    assert [(p.path, p.problem) for p in result.problems] == [
        (
            victim.as_posix(),
            f"does not match the case schema: artifacts/0/file {file!r} is not a plain file name "
            "([A-Za-z0-9_][A-Za-z0-9._-]{0,99})",
        )
    ]
    assert len(result.rows) == 5
    assert Path("merged/report.html").is_file()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and symlinks (POSIX)")
def test_links_special_files_and_leftovers_in_case_folders_are_listed_never_read(
    shards: list[Path], tmp_path: Path
) -> None:
    plot = next(Path("shard-1").rglob("plot.png"))
    case_dir = plot.parent
    secret = tmp_path / "outside" / "secret.png"
    secret.parent.mkdir()
    secret.write_bytes(b"top secret")
    plot.unlink()
    plot.symlink_to(secret)  # an artifact pointing out of the report tree
    (case_dir / ".case.json.4242.tmp").write_text("{")  # an interrupted rewrite next to a good case.json
    linked = case_dir.parent / "linked"
    linked.symlink_to(secret.parent, target_is_directory=True)
    fifo = Path("shard-2/run1/tests/gw0/fifo/case.json")
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR)  # holds the FIFO open, so reading it would not block but read "{}"
    os.write(writer, b"{}")
    try:
        result = merge(shards, Path("merged"))
    finally:
        os.close(writer)
    assert {p.path: p.problem for p in result.problems} == {
        plot.as_posix(): "symbolic link: not followed",
        (case_dir / ".case.json.4242.tmp").as_posix(): "partial write: a temporary file was left behind",
        linked.as_posix(): "symbolic link: not followed",
        fifo.as_posix(): "unreadable: a FIFO, not a regular file",
    }
    assert len(result.rows) == 6
    report = Path("merged/report.html").read_text()
    assert b64(b"top secret") not in report
    assert "a symbolic link: not followed" in report  # the artifact's note in the drill-down


def test_full_schema_validation_on_request(shards: list[Path]) -> None:
    victim = next(Path("shard-1").rglob("case.json"))
    doc = json.loads(victim.read_text())
    doc["unexpected"] = True
    victim.write_text(json.dumps(doc))
    assert merge(shards, Path("quick")).problems == []
    strict = merge(shards, Path("strict"), validate=True)
    assert len(strict.problems) == 1
    assert "unexpected" in strict.problems[0].problem


def test_junit_has_one_testcase_per_case(shards: list[Path]) -> None:
    merge(shards, Path("merged"))
    root = ET.parse("merged/junit.xml").getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("6", "1", "1", "1")
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert sorted(suites) == ["lighteval", "tests"]
    cases = {c.get("name"): c for c in suites["tests"].iter("testcase")}
    assert sorted(cases) == ["add", "csv", "div", "mul", "sub"]
    failure = cases["sub"].find("failure")
    assert failure is not None
    assert failure.get("message") == "exact: expected 1, got 2"
    assert cases["div"].find("error") is not None
    assert cases["mul"].find("skipped") is not None
    assert [child.tag for child in cases["add"]] == ["properties"]  # a pass: its scores, no verdict element


def test_summary_markdown(shards: list[Path], golden: Any) -> None:
    merge(shards, Path("merged"))
    assert golden == Path("merged/summary.md").read_text()


def test_cli_merge_appends_to_the_github_step_summary(
    shards: list[Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    step = Path("step-summary.md")
    step.write_text("## earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    assert main(["merge", *map(str, shards), "-o", "out"]) == 0
    text = step.read_text()
    assert text.startswith("## earlier step\n## evaljig report: 6 cases")
    out = capsys.readouterr().out
    assert "evaljig-report: 6 cases (3 pass, 1 fail, 1 error, 1 skip)" in out
    assert f"report: {Path('out/report.html').resolve()}" in out


def test_cli_merge_latest_run_into_its_merged_folder(tmp_path: Path, populate: Populate) -> None:
    old = populate(run="20250101T000000Z", records=[make_record("old")])
    new = populate(run="20250102T000000Z", records=[make_record("new")])
    shutil.copystat(old, new)  # equal mtimes: the name breaks the tie
    assert main(["merge", "--latest", str(tmp_path / "reports"), "--no-step-summary"]) == 0
    index = json.loads((new / "merged" / "index.json").read_text())
    assert [c["case_id"] for c in index["cases"]] == ["new"]
    # merging again does not read its own output
    assert main(["merge", str(new), "--no-step-summary"]) == 0
    assert json.loads((new / "merged" / "index.json").read_text())["totals"]["cases"] == 1


def test_validate_command(shards: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", *map(str, shards)]) == 0
    broken = next(Path("shard-1").rglob("case.json"))
    broken.write_text('{"schema_version": 1}')
    assert main(["validate", *map(str, shards)]) == 1
    assert "is a required property" in capsys.readouterr().out


def test_an_empty_merge_exits_non_zero_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "reports" / "run1"
    empty.mkdir(parents=True)
    assert main(["merge", str(empty), "--no-step-summary"]) == 1
    err = capsys.readouterr().err
    assert err == f"evaljig-report: no case found in {empty}: an empty merge is not a pass (--allow-empty)\n"
    assert main(["merge", str(empty), "--no-step-summary", "--allow-empty"]) == 0
    assert main(["merge", "--latest", str(tmp_path / "nothing-here"), "--no-step-summary"]) == 1
    assert main(["merge", "--latest", str(tmp_path / "nothing-here"), "--allow-empty"]) == 0


def test_validate_prints_one_line_per_invalid_file(shards: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    broken = next(Path("shard-1").rglob("case.json"))
    broken.write_text('{"schema_version": 1, "status": "' + "x\\n" * 5000 + '"}')
    assert main(["validate", *map(str, shards)]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("evaljig-report:")]
    assert len(lines) == 1
    assert lines[0].startswith(f"{broken.absolute()}: ") or lines[0].startswith(f"{broken}: ")
    assert " more)" in lines[0]
    assert len(lines[0]) < 600


def test_a_case_file_over_the_size_limit_is_a_problem_and_not_read(
    shards: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    huge = next(Path("shard-1").rglob("case.json"))
    with huge.open("r+b") as fh:
        fh.truncate(17 * 1024 * 1024)  # sparse: over the default 16 MiB, and not valid JSON if it were read
    result = collect(shards)
    assert [p.problem for p in result.problems] == [
        f"too large: {17 * 1024 * 1024} bytes, over the {16 * 1024 * 1024}-byte limit (--max-case-bytes); not read"
    ]
    # the largest case of shard-2 just over the limit: the smaller ones (in any listing order) still merge
    size = max(p.stat().st_size for p in Path("shard-2").rglob("case.json"))
    assert main(["merge", *map(str, shards), "-o", "out", "--no-step-summary", "--max-case-bytes", str(size - 1)]) == 0
    problems = json.loads(Path("out/index.json").read_text())["problems"]
    assert any(p["problem"].startswith(f"too large: {size} bytes, over the {size - 1}-byte") for p in problems)
    assert main(["validate", str(huge)]) == 1
    assert capsys.readouterr().out.splitlines()[-2].endswith("(--max-case-bytes); not read")
