"""A case's tool runs exactly once per run, whatever schedules the tests: xdist's own ``--dist`` modes and
pytest-split shards. Real subprocess runs with both evaljig plugins; the tool appends to a counter file.

Each case is one pytest item, so no scheduler or splitter can divide it: xdist and pytest-split
hand out items, and pytest-split's algorithms (``duration_based_chunks``, ``least_duration``) place
every item on its own.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

CASES = [f"city-{n}" for n in range(7)]  # 7 cases x 3 metrics: no scheduler or shard boundary falls between cases

SUITE = """
import os
from pathlib import Path

from evaljig_cases import EvalCase, FunctionCall, Metric, ToolEval

COUNTER = Path(__file__).parent / "tool-runs.log"


class Ran(Metric):
    def evaluate(self, case, inference):
        return self.passed("ran")


class SameRun(Metric):
    def evaluate(self, case, inference):
        here = (os.environ.get("PYTEST_XDIST_WORKER", "main"), os.getpid())
        if tuple(inference["where"]) != here:
            return self.failed(f"tool ran in {inference['where']}, metric in {here}")
        return self.passed("same run")


class Third(Metric):
    def evaluate(self, case, inference):
        return self.passed("third", score=0.5)


class TestWeather(ToolEval):
    cases = [
        EvalCase(id=f"city-{n}", tool_id="weather", function_call=FunctionCall(name="forecast", args={"n": n}))
        for n in range(7)
    ]
    metrics = (Ran(), SameRun(), Third())

    def run_tool(self, case):
        with COUNTER.open("a") as fh:
            fh.write(case.id + "\\n")
        return {"where": [os.environ.get("PYTEST_XDIST_WORKER", "main"), os.getpid()]}
"""

COMMON = ("-p", "no:cacheprovider", "-p", "no:randomly")
#: What ``pytest -v`` names as the scheduler of each ``--dist`` mode: xdist's own, always.
SCHEDULERS = {
    "load": "LoadScheduling",
    "worksteal": "WorkStealingScheduling",
    "loadscope": "LoadScopeScheduling",
    "loadfile": "LoadFileScheduling",
}


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makepyfile(test_weather=SUITE)
    monkeypatch.setenv("EVALJIG_RUN", "r1")
    monkeypatch.setenv("EVALJIG_SESSION", "tests")
    for name in ("EVALJIG_REPORT_DIR", "EVALJIG_ALL_TESTS", "EVALJIG_REPORT"):
        monkeypatch.delenv(name, raising=False)
    return pytester


def tool_runs(pytester: pytest.Pytester) -> Counter[str]:
    counter = pytester.path / "tool-runs.log"
    return Counter(counter.read_text().splitlines() if counter.exists() else [])


def case_files(pytester: pytest.Pytester) -> list[dict[str, object]]:
    return [json.loads(p.read_text()) for p in sorted((pytester.path / "reports").rglob("case.json"))]


@pytest.mark.parametrize("dist", ["load", "worksteal", "loadscope", "loadfile"])
def test_each_cases_tool_runs_once_under_every_xdist_dist_mode(suite: pytest.Pytester, dist: str) -> None:
    result = suite.runpytest_subprocess("-p", "xdist", "-n", "2", f"--dist={dist}", "-v", *COMMON)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert tool_runs(suite) == dict.fromkeys(CASES, 1)
    docs = case_files(suite)
    assert sorted(d["source"]["case_id"] for d in docs) == CASES  # type: ignore[index]
    for doc in docs:  # every metric scored on that one run, in one case file
        assert [(m["name"], m["status"]) for m in doc["metrics"]] == [  # type: ignore[attr-defined]
            ("ran", "pass"),
            ("same_run", "pass"),
            ("third", "pass"),
        ]
    # xdist's own scheduler stays in charge (evaljig replaces none)
    result.stdout.fnmatch_lines([f"scheduling tests via {SCHEDULERS[dist]}"])


def test_pytest_split_shards_never_divide_a_case(suite: pytest.Pytester) -> None:
    """``--splits 2``: both groups together run every case's tool exactly once (no durations file: average times)."""
    for group in ("1", "2"):
        result = suite.runpytest_subprocess("-p", "pytest_split", "--splits", "2", "--group", group, *COMMON)
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
        result.stdout.fnmatch_lines([f"*Running group {group}/2*"])
    assert tool_runs(suite) == dict.fromkeys(CASES, 1)
    assert sorted(d["source"]["case_id"] for d in case_files(suite)) == CASES  # type: ignore[index]
    assert all(len(d["metrics"]) == 3 for d in case_files(suite))  # type: ignore[arg-type]


def test_pytest_split_under_xdist_runs_each_case_once(suite: pytest.Pytester) -> None:
    for group in ("1", "2"):
        result = suite.runpytest_subprocess(
            "-p", "pytest_split", "--splits", "2", "--group", group, "-p", "xdist", "-n", "2", *COMMON
        )  # fmt: skip
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert tool_runs(suite) == dict.fromkeys(CASES, 1)


def test_random_order_still_runs_each_cases_tool_once(suite: pytest.Pytester) -> None:
    """pytest-randomly shuffles items within a class: a case split over items would run its tool again."""
    result = suite.runpytest_subprocess("-p", "no:cacheprovider", "-p", "randomly", "--randomly-seed=3")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert tool_runs(suite) == dict.fromkeys(CASES, 1)


def test_reports_land_in_one_case_file_per_case(suite: pytest.Pytester) -> None:
    result = suite.runpytest_subprocess("-p", "xdist", "-n", "2", *COMMON)
    assert result.ret == pytest.ExitCode.OK
    paths = sorted(Path(p).parent.name for p in (suite.path / "reports").rglob("case.json"))
    assert len(paths) == len(set(paths)) == len(CASES)
