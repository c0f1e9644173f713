"""Noise-aware gates on real pytest runs: ``--evaljig-repeats K``, the merge's runs/passes, Fisher's exact test.

The planted noisy tool answers wrong with a 10 % probability, drawn from a RNG seeded by (run label,
case, repeat): every run here is deterministic, yet the base and the head runs see different noise.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from evaljig_report import merge
from evaljig_report._cli import main

from .report_samples import report_suite

SUITE = """
import os
import random
from pathlib import Path

from evaljig_cases import EvalCase, FunctionCall, Metric, ToolEval

LOG = Path(__file__).parent / "tool-runs.log"
NOISE_RUN = os.environ.get("NOISE_RUN", "base")
BROKEN = os.environ.get("BROKEN_CASE", "")
CRASH = os.environ.get("CRASH_AT", "")


class Exact(Metric):
    def evaluate(self, case, inference):
        if inference["answer"] == case.expectations["answer"]:
            return self.passed("right answer", score=1.0)
        return self.failed(f"answered {inference['answer']}", score=0.0)


class TestNoisy(ToolEval):
    cases = [
        EvalCase(id=f"q{n:02d}", tool_id="add", function_call=FunctionCall(name="add", args={"a": n, "b": 1}),
                 expectations={"answer": n + 1})
        for n in range(20)
    ]
    metrics = (Exact(),)

    def run_tool(self, case):
        with LOG.open("a") as fh:
            fh.write(f"{case.id} {self.repeat} {os.environ.get('PYTEST_XDIST_WORKER', 'main')}\\n")
        if f"{case.id}:{self.repeat}" == CRASH:
            os._exit(1)
        args = case.function_call.args
        flip = random.Random(f"{NOISE_RUN}:{case.id}:{self.repeat}").random() < 0.10
        wrong = flip or case.id == BROKEN
        return {"answer": args["a"] + args["b"] + (1 if wrong else 0)}
"""

INNER = ("-p", "no:cacheprovider", "-p", "no:randomly")
#: Noise seeds of the base and head runs. Any seeds show the effect most of the time (a 10 % flip rate over
#: 20 cases); these make the single runs flip a case that passed in the base (q03: pass -> fail).
NOISE = {"base": "base1", "head": "head1"}


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    return report_suite(pytester, monkeypatch, test_noisy=SUITE)


def run(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, label: str, *args: str, broken: str = "") -> Path:
    """One real pytest run of the suite into ``reports/<label>``, merged; returns the merged folder."""
    monkeypatch.setenv("EVALJIG_RUN", label)
    monkeypatch.setenv("NOISE_RUN", NOISE[label.split("-")[0]])
    monkeypatch.setenv("BROKEN_CASE", broken)
    result = suite.runpytest_subprocess(*INNER, *args)
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()
    run_dir = suite.path / "reports" / label
    merge([run_dir], run_dir / "merged")
    return run_dir / "merged"


def metrics(merged: Path) -> dict[str, dict[str, Any]]:
    return {r["case_id"]: r["metrics"][0] for r in json.loads((merged / "index.json").read_text())["cases"]}


def gate(base: Path, head: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    """``compare BASE HEAD --fail-on-regression``; with ``--baseline FILE`` in ``extra``, BASE is the new run."""
    capsys.readouterr()
    runs = [str(base)] if "--baseline" in extra else [str(base), str(head)]
    code = main(["compare", *runs, "--fail-on-regression", "--no-step-summary", *extra])
    return code, capsys.readouterr().out


def test_a_flip_fails_a_single_run_gate_but_passes_with_5_repeats_while_a_real_regression_still_fails(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # one run each: some case that passed in the base answers wrong in the head by noise alone
    base1, head1 = run(suite, monkeypatch, "base-1"), run(suite, monkeypatch, "head-1")
    flipped = [c for c, m in metrics(head1).items() if m["status"] == "fail" and metrics(base1)[c]["status"] == "pass"]
    assert flipped, "the planted noise must flip at least one case between the two single runs"
    code, out = gate(base1, head1, capsys)
    assert code == 1
    assert "### Regressed" in out
    assert f"`test_noisy.py::TestNoisy::{flipped[0]}`" in out

    # five repeats each: the same noise is not significant (Fisher), the gate passes
    base5, head5 = run(suite, monkeypatch, "base-5", "--evaljig-repeats", "5"), None
    head5 = run(suite, monkeypatch, "head-5", "--evaljig-repeats", "5")
    noisy = {c: m for c, m in metrics(head5).items() if m["passes"] < m["runs"]}
    assert noisy, "the head with repeats still has failed attempts (noise), it just is not significant"
    assert all(m["runs"] == 5 for m in metrics(head5).values())
    code, out = gate(base5, head5, capsys)
    assert code == 0, out
    assert "0 regressed" in out
    assert "p=" in out
    assert "pass^k" in out
    assert "pass@k 20/20" in out

    # the same against the blessed baseline of the base run
    baseline = suite.path / "evaljig-baseline.json"
    assert main(["bless", str(base5), "--out", str(baseline)]) == 0
    assert gate(head5, Path(), capsys, "--baseline", str(baseline))[0] == 0

    # a real regression (the case now always answers wrong) fails the gate even with repeats
    broken = run(suite, monkeypatch, "head-broken", "--evaljig-repeats", "5", broken="q07")
    assert gate(broken, Path(), capsys, "--baseline", str(baseline))[0] == 1
    code, out = gate(base5, broken, capsys)
    assert code == 1
    regressed = [line for line in out.splitlines() if "q07" in line]
    assert regressed
    assert "0/5 runs passed" in regressed[0]
    assert out.startswith("## evaljig compare: 1 regressed")


def test_repeats_under_xdist_run_the_tool_once_per_case_and_repeat(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    merged = run(suite, monkeypatch, "base-x", "-p", "xdist", "-n", "2", "--evaljig-repeats", "3")
    lines = (suite.path / "tool-runs.log").read_text().splitlines()
    runs = Counter((case, repeat) for case, repeat, _ in (line.split() for line in lines))
    assert set(runs.values()) == {1}
    assert len(runs) == 20 * 3
    assert {w for *_, w in (line.split() for line in lines)} == {"gw0", "gw1"}
    by_case = metrics(merged)
    assert len(by_case) == 20
    assert all(m["runs"] == 3 for m in by_case.values())
    index = json.loads((merged / "index.json").read_text())
    assert index["problems"] == []
    assert index["duplicates_merged"] == 0


def test_a_worker_dying_in_one_repeat_makes_the_case_an_error_and_keeps_its_other_runs(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRASH_AT", "q05:2")
    merged = run(suite, monkeypatch, "base-crash", "-p", "xdist", "-n", "2", "--evaljig-repeats", "3")
    rows = {r["case_id"]: r for r in json.loads((merged / "index.json").read_text())["cases"]}
    crashed = rows["q05"]
    assert crashed["status"] == "error"
    assert any(
        "crashed while running test_noisy.py::TestNoisy::test_case[q05-repeat2of3]" in e for e in crashed["errors"]
    )
    assert crashed["metrics"][0]["runs"] == 2  # the two repeats that finished still count
    assert all(r["status"] != "error" for c, r in rows.items() if c != "q05")


def test_without_the_option_nothing_changes(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    result_dir = run(suite, monkeypatch, "base-0")
    row = json.loads((result_dir / "index.json").read_text())["cases"][0]
    assert set(row["metrics"][0]) == {"name", "metric", "status", "score", "reason"}  # no runs/passes
    case_files = sorted((suite.path / "reports" / "base-0").glob("*/*/*/case.json"))
    assert len(case_files) == 20
    assert all(not p.parent.name.endswith(("-a1", "-a2")) for p in case_files)
    assert all("attempt" not in json.loads(p.read_text())["source"] for p in case_files)


def test_a_bad_repeat_count_is_a_usage_error(suite: pytest.Pytester) -> None:
    result = suite.runpytest_subprocess(*INNER, "--evaljig-repeats", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--evaljig-repeats '0': must be a whole number from 1 to 1000*"])
