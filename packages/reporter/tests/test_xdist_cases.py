"""Real ``pytest -n 2`` runs: xdist's own scheduler, one tool run per case, and crashes never lose a case.

(Every ``--dist`` mode and pytest-split shards: packages/cases/tests/test_once_per_case.py.)"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from evaljig_report import collect, merge

from .report_samples import report_suite

SUITE = """
import os
from pathlib import Path

from evaljig_cases import EvalCase, FunctionCall, Metric, ToolEval

LOG = Path(__file__).parent / "tool-runs.log"
CRASH = os.environ.get("CRASH_CASE", "")


class Ran(Metric):
    def evaluate(self, case, inference):
        return self.passed("ran", score=1.0)


class SameWorker(Metric):
    def evaluate(self, case, inference):
        here = os.environ.get("PYTEST_XDIST_WORKER", "main")
        if inference["worker"] != here:
            return self.failed(f"tool ran on {inference['worker']}, metric on {here}")
        return self.passed("same worker")


class Third(Metric):
    def evaluate(self, case, inference):
        return self.passed("third")


class TestWeather(ToolEval):
    cases = [
        EvalCase(id=f"city-{n:02d}", tool_id="weather", function_call=FunctionCall(name="forecast", args={"n": n}))
        for n in range(12)
    ]
    metrics = (Ran(), SameWorker(), Third())

    def run_tool(self, case):
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with LOG.open("a") as fh:
            fh.write(f"{case.id} {worker}\\n")
        if case.id == CRASH:
            os._exit(1)
        return {"worker": worker, "city": case.id}
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    return report_suite(pytester, monkeypatch, test_weather=SUITE)


def tool_runs(suite: pytest.Pytester) -> list[tuple[str, str]]:
    lines = (suite.path / "tool-runs.log").read_text().splitlines()
    return [(case, worker) for case, worker in (line.split() for line in lines)]


def rows(index: Path) -> dict[str, dict[str, Any]]:
    return {r["case_id"]: r for r in json.loads(index.read_text())["cases"]}


XDIST_N2 = ("-p", "xdist", "-n", "2", "-p", "no:cacheprovider", "-p", "no:randomly")


def test_an_unrelated_suite_under_n2_is_scheduled_by_xdists_own_scheduler(pytester: pytest.Pytester) -> None:
    """Installing the reporter changes nothing in how a suite without eval cases is scheduled."""
    pytester.makepyfile(
        test_plain="import pytest\n\n@pytest.mark.parametrize('n', range(6))\ndef test_n(n):\n    pass\n"
    )
    result = pytester.runpytest_subprocess(*XDIST_N2, "-v")
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["scheduling tests via LoadScheduling"])
    result.stdout.no_fnmatch_line("*evaljig-report: * eval case(s)*")


def test_the_removed_schedule_option_is_unknown(pytester: pytest.Pytester) -> None:
    """No opt-in is needed any more: a case is one item, so xdist cannot divide it."""
    result = pytester.runpytest_subprocess("--evaljig-schedule-by-case", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unrecognized arguments: --evaljig-schedule-by-case*"])


def test_n2_runs_each_case_once_on_one_worker_and_spreads_cases(suite: pytest.Pytester) -> None:
    result = suite.runpytest_subprocess(*XDIST_N2, "-v")
    result.assert_outcomes(passed=12)
    result.stdout.fnmatch_lines(["scheduling tests via LoadScheduling"])
    runs = tool_runs(suite)
    assert sorted(Counter(case for case, _ in runs).values()) == [1] * 12  # one tool run per case
    assert {worker for _, worker in runs} == {"gw0", "gw1"}  # and the cases still spread over both workers
    docs = [json.loads(p.read_text()) for p in (suite.path / "reports" / "r1").rglob("case.json")]
    assert len(docs) == 12  # each case written by exactly one worker
    assert all(len(d["metrics"]) == 3 for d in docs)


def test_a_worker_crash_mid_case_is_an_error_naming_the_worker_and_no_case_is_lost(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRASH_CASE", "city-03")
    result = suite.runpytest_subprocess(*XDIST_N2)
    result.stdout.fnmatch_lines(["*crashed while running*city-03*"])
    crashed_runs = [w for case, w in tool_runs(suite) if case == "city-03"]
    assert len(crashed_runs) == 1  # the crashing case is not handed to the next worker
    run = suite.path / "reports" / "r1"
    merged = merge([run], run / "merged", generated="2025-01-01T00:00:00+00:00")
    by_id = {r.case_id: r for r in merged.rows}
    assert len(by_id) == 12
    crash = by_id["city-03"]
    assert crash.status == "error"
    assert crash.errors == [
        f"worker {crashed_runs[0]} crashed while running test_weather.py::TestWeather::"
        "test_case[city-03] (the case did not finish)"
    ]
    assert {r.status for cid, r in by_id.items() if cid != "city-03"} == {"pass"}
    assert [p.problem for p in merged.problems] == ["worker folder without index.json: it crashed or was killed"]


def test_a_killed_session_lists_every_collected_case_as_an_error(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole session dies (a run without xdist, killed inside the tool): merge still lists every case."""
    monkeypatch.setenv("CRASH_CASE", "city-05")
    result = suite.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    assert result.ret == 1
    run = suite.path / "reports" / "r1"
    found = collect([run])
    by_id = {r.case_id: r for r in found.rows}
    assert len(by_id) == 12
    assert [cid for cid, r in sorted(by_id.items()) if r.status == "pass"] == [f"city-{n:02d}" for n in range(5)]
    assert by_id["city-07"].errors == [
        "collected but no result: worker main crashed or was killed before this case finished (it wrote no index.json)"
    ]
    assert sorted(p.problem for p in found.problems) == [
        "session folder without index.json: the session did not finish",
        "worker folder without index.json: it crashed or was killed",
    ]
