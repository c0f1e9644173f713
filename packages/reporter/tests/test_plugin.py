"""The pytest plugin end to end, under pytester, with and without xdist."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaljig_report import schema_errors

from .report_samples import report_suite

EVAL_TESTS = """
import pytest

CASES = ["alpha", "beta", "gamma", "delta"]


def record(request, case_id, metric, status):
    request.node.user_properties.append(("evaljig.case", {
        "suite": "test_evals.py::TestTool", "case_id": case_id,
        "case": {"case_id": case_id, "description": "d", "tool_id": "t", "function_call": {"name": "f", "args": {}}},
        "inference": {"output": case_id},
        "metric": {"name": metric, "status": status, "score": 1.0 if status == "pass" else 0.0, "reason": "r"},
        "error": None,
    }))


class TestTool:
    @pytest.mark.parametrize("case_id", CASES)
    def test_exact(self, request, case_id):
        record(request, case_id, "exact", "fail" if case_id == "beta" else "pass")

    @pytest.mark.parametrize("case_id", CASES)
    def test_judge(self, request, case_id):
        record(request, case_id, "judge", "pass")


def test_plain():
    pass


def test_plain_fails():
    assert 1 == 2
"""


def case_files(root: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(root.rglob("case.json"))]


def by_case(docs: list[dict[str, Any]]) -> dict[str, list[str]]:
    """case_id -> metric names (joined across workers, as a merge would)."""
    out: dict[str, list[str]] = {}
    for doc in docs:
        out.setdefault(doc["source"]["case_id"], []).extend(m["name"] for m in doc["metrics"])
    return {k: sorted(v) for k, v in sorted(out.items())}


@pytest.fixture
def evals(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    return report_suite(pytester, monkeypatch, test_evals=EVAL_TESTS)


def test_records_contract_cases_only_by_default(evals: pytest.Pytester) -> None:
    result = evals.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=9, failed=1)
    session = evals.path / "reports" / "r1" / "tests"
    docs = case_files(session)
    assert by_case(docs) == {c: ["exact", "judge"] for c in ("alpha", "beta", "delta", "gamma")}
    assert all(schema_errors(d) == [] for d in docs)
    assert {d["source"]["worker"] for d in docs} == {"main"}
    assert json.loads((session / "main" / "index.json").read_text())["totals"] == {"pass": 3, "fail": 1}
    assert json.loads((session / "index.json").read_text())["workers"][0]["worker"] == "main"
    result.stdout.fnmatch_lines(["evaljig-report: session index *index.json"])


def test_all_tests_records_plain_tests_too(evals: pytest.Pytester) -> None:
    evals.runpytest("-p", "no:cacheprovider", "--evaljig-all-tests", "--evaljig-report-dir", "out")
    docs = {d["source"]["case_id"]: d for d in case_files(evals.path / "out")}
    assert docs["test_plain"]["status"] == "pass"
    assert docs["test_plain_fails"]["status"] == "fail"
    assert "assert 1 == 2" in docs["test_plain_fails"]["metrics"][0]["reason"]
    assert docs["test_plain"]["kind"] == "pytest"
    assert len(docs) == 6


def test_no_report_option_writes_nothing(evals: pytest.Pytester) -> None:
    evals.runpytest("-p", "no:cacheprovider", "--evaljig-no-report")
    assert not (evals.path / "reports").exists()


def test_under_xdist_each_worker_writes_its_cases_and_the_controller_the_session_index(
    evals: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALJIG_ALL_TESTS", "1")
    monkeypatch.delenv("EVALJIG_RUN")  # the controller hands its timestamp run id to the workers
    result = evals.runpytest_subprocess("-p", "xdist", "-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=9, failed=1)
    runs = list((evals.path / "reports").iterdir())
    assert len(runs) == 1
    session = runs[0] / "tests"
    workers = sorted(p.name for p in session.iterdir() if p.is_dir())
    assert workers == ["gw0", "gw1"]
    docs = case_files(session)
    assert {d["source"]["worker"] for d in docs} == {"gw0", "gw1"}
    assert by_case(docs) == {
        **{c: ["exact", "judge"] for c in ("alpha", "beta", "delta", "gamma")},
        "test_plain": ["pytest"],
        "test_plain_fails": ["pytest"],
    }
    index = json.loads((session / "index.json").read_text())
    assert index["kind"] == "session"
    assert [w["worker"] for w in index["workers"]] == ["gw0", "gw1"]
    for worker in workers:
        worker_index = json.loads((session / worker / "index.json").read_text())
        assert worker_index["worker"] == worker
        assert all((session / worker / row["path"]).is_file() for row in worker_index["cases"])


ODD_OUTPUT_TESTS = """
import math


def test_odd_output(request):
    request.node.user_properties.append(("evaljig.case", {
        "suite": "test_odd.py", "case_id": "odd", "case": {"id": "odd"},
        "inference": {"answer": math.factorial(25), "text": "undecodable \\udcff byte"},
        "metric": {"name": "exact", "status": "pass", "score": 1.0, "reason": "r"},
        "error": None,
    }))
"""


def test_tool_output_orjson_refuses_does_not_end_the_session(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_odd=ODD_OUTPUT_TESTS)
    monkeypatch.setenv("EVALJIG_RUN", "r1")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK
    (doc,) = case_files(pytester.path / "reports" / "r1")
    assert doc["inference"] == {
        "answer": 15511210043330985984000000,
        "text": "undecodable \ufffd byte",
    }
    assert doc["status"] == "pass"
    result.stdout.fnmatch_lines(["evaljig-report: session index *index.json"])


def test_a_report_that_cannot_be_written_is_reported_not_an_internal_error(evals: pytest.Pytester) -> None:
    (evals.path / "not-a-folder").write_text("")
    result = evals.runpytest("-p", "no:cacheprovider", "--evaljig-report-dir", "not-a-folder/reports")
    result.assert_outcomes(passed=9, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["evaljig-report: could not write a report: test_evals.py::TestTool::test_exact*"])


def test_dist_without_workers_records_in_this_process(evals: pytest.Pytester) -> None:
    """`--dist loadscope` without `-n`/`--tx` distributes nothing: this process runs, and records, the tests."""
    result = evals.runpytest_subprocess("-p", "xdist", "--dist", "loadscope", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=9, failed=1)
    session = evals.path / "reports" / "r1" / "tests"
    assert by_case(case_files(session)) == {c: ["exact", "judge"] for c in ("alpha", "beta", "delta", "gamma")}
    assert json.loads((session / "main" / "index.json").read_text())["totals"] == {"pass": 3, "fail": 1}


def test_an_xdist_run_without_eval_cases_leaves_no_folder(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "xdist", "-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert list((pytester.path / "reports").iterdir()) == []
