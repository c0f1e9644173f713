"""The tool-eval base class, run in an inner pytest session: one item and one tool run per (class, case),
patching, the recording contract, and pass / fail / skip / error semantics."""
# cases are declared as class attributes, pytest-class style

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaljig_cases import RECORD_KEY, CaseRecord, EvalCase, FunctionCall, MetricResult, ToolEval, run_tool

pytest_plugins = ["pytester"]

HELPER = """
def load(name):
    raise RuntimeError("the real loader must not run in evals")

REAL = load
"""

SUITE = """
import asyncio
from pathlib import Path

import helper
from evaljig_cases import EvalCase, FunctionCall, Metric, ToolEval

LOG = Path(__file__).with_name("calls.log")


def case(case_id, expected=None, **args):
    expectations = {} if expected is None else {"value": expected}
    return EvalCase(id=case_id, tool_id="echo", function_call=FunctionCall(name="echo", args=args),
                    expectations=expectations, artifact_mocks={"table": [{"case": case_id}]})


def echo(owner, case):
    with LOG.open("a") as log:
        log.write(f"{type(owner).__name__}:{case.id}\\n")
    if case.function_call.args.get("boom"):
        raise ValueError(f"tool exploded on {case.id}")
    return {"value": case.function_call.args.get("value")}


class Match(Metric):
    def evaluate(self, case, inference):
        if "value" not in case.expectations:
            return self.skipped("no expected value")
        if inference["value"] == case.expectations["value"]:
            return self.passed("equal")
        return self.failed(f"{inference['value']} != {case.expectations['value']}")


class AsyncMatch(Match):
    async def evaluate_async(self, case, inference):
        await asyncio.sleep(0)
        return self.evaluate(case, inference)


class Explodes(Metric):
    def evaluate(self, case, inference):
        if case.expectations.get("value") == "explode":
            raise KeyError("metric exploded")
        return self.passed(score=0.5)


class TestSync(ToolEval):
    cases = [case("one", 1, value=1), case("two", 2, value=2)]
    metrics = [Match(), AsyncMatch(), Explodes()]

    def run_tool(self, case):
        return echo(self, case)


class TestAsync(TestSync):
    async def run_tool(self, case):
        await asyncio.sleep(0)
        return echo(self, case)


class TestOutcomes(ToolEval):
    cases = [
        case("ok", 1, value=1),
        case("wrong", 2, value=3),
        case("unscored", value=1),
        case("broken", 1, boom=True),
        case("metric_error", "explode", value="explode"),
        EvalCase(id="other_tool", tool_id="something-else", function_call=FunctionCall(name="x")),
    ]
    metrics = [Match(), Explodes()]
    tool_id = "echo"

    def run_tool(self, case):
        return echo(self, case)


class TestPatched(ToolEval):
    cases = [case("p1", value=1), case("p2", value=2)]
    patches = {"helper.load": lambda case: (lambda name: [*case.artifact_mocks[name], {"patched": True}])}

    class PatchActive(Metric):
        def evaluate(self, case, inference):
            assert helper.load is not helper.REAL, "patch must stay active while the case's metrics run"
            return self.passed() if inference["rows"][0]["case"] == case.id else self.failed("wrong mocks")

    metrics = [PatchActive()]

    def run_tool(self, case):
        echo(self, case)
        return {"rows": helper.load("table")}


class TestOtherTool(ToolEval):
    tool_id = "something-else"
    cases = TestOutcomes.cases
    metrics = [Match()]

    def run_tool(self, case):
        return echo(self, case)


def test_patches_are_restored_after_the_class():
    assert helper.load is helper.REAL
"""

#: Inner sessions: no cache or report files, deprecations fail, and no AST work (plain asserts, native
#: tracebacks) because CPython 3.11's AST recursion-depth bug can break in-process sessions spuriously.
INNER_ARGS = (
    "-p", "no:cacheprovider", "-p", "no:evaljig_report", "-W", "error::pytest.PytestDeprecationWarning",
    "--assert=plain", "--tb=native",
)  # fmt: skip


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(helper=HELPER, test_suite=SUITE)
    return pytester


def calls(pytester: pytest.Pytester) -> list[str]:
    log = pytester.path / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def records(reprec: pytest.HookRecorder) -> dict[str, list[dict[str, Any]]]:
    """Call-phase records by test id (``Class::test_case[case]``), one per metric, as the items appended them."""
    found: dict[str, list[dict[str, Any]]] = {}
    for report in reprec.getreports("pytest_runtest_logreport"):
        if report.when != "call":
            continue
        entries = [value for key, value in report.user_properties if key == RECORD_KEY]
        if entries:
            found[report.nodeid.split("::", 1)[1]] = entries
    return found


def without_durations(found: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The records minus each metric's measured ``duration_s`` (a time, so not golden)."""
    for entries in found.values():
        for record in entries:
            assert type(record["duration_s"]) is float
            assert record["duration_s"] >= 0
    return {test: [{k: v for k, v in r.items() if k != "duration_s"} for r in rs] for test, rs in found.items()}


def test_tool_runs_once_per_class_and_case(suite: pytest.Pytester) -> None:
    reprec = suite.inline_run("-k", "TestSync or TestAsync", *INNER_ARGS)
    reprec.assertoutcome(passed=2 * 2)
    assert calls(suite) == ["TestSync:one", "TestSync:two", "TestAsync:one", "TestAsync:two"]


def test_items_are_one_per_case_recording_every_metric(suite: pytest.Pytester) -> None:
    reprec = suite.inline_run("-k", "TestSync", *INNER_ARGS)
    found = records(reprec)
    assert list(found) == ["TestSync::test_case[one]", "TestSync::test_case[two]"]
    for entries in found.values():
        assert [r["metric"]["name"] for r in entries] == ["match", "async_match", "explodes"]


def test_patches_are_active_for_the_class_and_restored_after(suite: pytest.Pytester) -> None:
    reprec = suite.inline_run("-k", "TestPatched or restored", *INNER_ARGS)
    reprec.assertoutcome(passed=3)
    assert records(reprec)["TestPatched::test_case[p2]"][0]["inference"] == {
        "rows": [{"case": "p2"}, {"patched": True}]
    }
    assert calls(suite) == ["TestPatched:p1", "TestPatched:p2"]


def test_outcomes_follow_the_metric_status(suite: pytest.Pytester) -> None:
    reprec = suite.inline_run("-k", "TestOutcomes", *INNER_ARGS)
    calls_ = [r for r in reprec.getreports("pytest_runtest_logreport") if r.when == "call"]
    outcome = {r.nodeid.split("[")[1].rstrip("]"): r for r in calls_}
    status = {key: r.outcome for key, r in outcome.items()}
    # fail if any metric failed, else pass if any passed (a skipped metric does not skip the case)
    assert status == {
        "ok": "passed",
        "wrong": "failed",
        "unscored": "passed",
        "broken": "failed",
        "metric_error": "failed",
    }
    assert str(outcome["wrong"].longrepr) == "case 'wrong': 1 of 2 metrics failed\n  match: 3 != 2"
    assert str(outcome["broken"].longrepr).startswith(
        "case 'broken': tool raised: ValueError: tool exploded on broken (every metric fails: match, explodes)"
    )
    assert str(outcome["metric_error"].longrepr).startswith(
        "case 'metric_error': 1 of 2 metrics failed\n  explodes: metric raised: KeyError: 'metric exploded'"
    )
    assert "other_tool" not in outcome  # filtered out by tool_id
    assert calls(suite) == [f"TestOutcomes:{c}" for c in ("ok", "wrong", "unscored", "broken", "metric_error")]


def test_a_case_whose_every_metric_skipped_is_skipped(suite: pytest.Pytester) -> None:
    reprec = suite.inline_run("-k", "TestOtherTool", *INNER_ARGS)
    ((report,),) = [[r for r in reprec.getreports("pytest_runtest_logreport") if r.when == "call"]]
    assert report.outcome == "skipped"
    assert report.longrepr[2] == "Skipped: match: no expected value"  # type: ignore[index]


def test_records_follow_the_contract(suite: pytest.Pytester, golden: Any) -> None:
    reprec = suite.inline_run("-k", "TestOutcomes", *INNER_ARGS)
    found = records(reprec)
    assert sum(map(len, found.values())) == 10  # every metric records, whatever its outcome
    for record in (r for entries in found.values() for r in entries):
        assert list(record) == [
            "suite", "case_id", "case", "inference", "metric", "error", "error_source", "traceback", "duration_s"
        ]  # fmt: skip
        assert json.loads(json.dumps(record)) == record  # plain JSON values only
        assert CaseRecord.model_validate(record).model_dump(mode="json") == record
        assert record["suite"] == "test_suite.py::TestOutcomes"
        assert record["case"] == EvalCase.model_validate(record["case"]).model_dump(mode="json")
    assert golden == without_durations(found)


def test_duplicate_case_ids_and_metric_names_are_collection_errors(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_dupes="""
        from evaljig_cases import EvalCase, FunctionCall, Metric, ToolEval

        class M(Metric):
            def evaluate(self, case, inference):
                return self.passed()

        def case(i):
            return EvalCase(id=i, tool_id="t", function_call=FunctionCall(name="f"))

        class TestDupCases(ToolEval):
            cases = [case("a"), case("a")]
            metrics = [M()]

        class TestDupMetrics(ToolEval):
            cases = [case("a")]
            metrics = [M(), M()]

        class TestNoMetrics(ToolEval):
            cases = [case("a")]
        """
    )
    result = pytester.runpytest(*INNER_ARGS)
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(
        ["*duplicate case id 'a'*", "*metric names must be unique*", "*TestNoMetrics: no metrics*"]
    )


def test_run_case_and_run_tool_outside_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    class Doubler(ToolEval):
        cases = [EvalCase(id="c", tool_id="t", function_call=FunctionCall(name="f", args={"x": 2}))]
        patches = {f"{__name__}.Path.cwd": lambda case: lambda: Path("/patched")}

        def run_tool(self, case: EvalCase) -> dict[str, Any]:
            return {"x": case.function_call.args["x"] * 2, "where": Path.cwd()}

    run = Doubler.run_case(Doubler.cases[0])
    assert (run.inference, run.error) == ({"x": 4, "where": "/patched"}, None)
    assert Path.cwd() != Path("/patched")
    bad = run_tool(lambda case: ["not", "a", "mapping"], Doubler.cases[0])  # type: ignore[arg-type,return-value]
    assert (bad.inference, bad.error) == (None, "TypeError: a tool must return a mapping or a pydantic model, got list")


def test_metrics_answering_under_one_name_both_fail(pytester: pytest.Pytester) -> None:
    """A lenient metric reporting as "accuracy" must not hide a strict one that failed under the same name."""
    pytester.makepyfile(
        test_names="""
        from evaljig_cases import EvalCase, FunctionCall, Metric, MetricResult, ToolEval

        class Strict(Metric):
            def evaluate(self, case, inference):
                return MetricResult(name="accuracy", status="fail", score=0.0, reason="wrong answer")

        class Lenient(Metric):
            def evaluate(self, case, inference):
                return MetricResult(name="accuracy", status="pass", score=1.0, reason="close enough")

        class TestNames(ToolEval):
            cases = [EvalCase(id="c1", tool_id="t", function_call=FunctionCall(name="f"))]
            metrics = [Strict(), Lenient()]

            def run_tool(self, case):
                return {"answer": 1}
        """
    )
    reprec = pytester.inline_run(*INNER_ARGS)
    reprec.assertoutcome(failed=1)
    (entries,) = records(reprec).values()
    assert [(r["metric"]["name"], r["metric"]["status"]) for r in entries] == [
        ("strict", "fail"),
        ("lenient", "fail"),
    ]
    assert entries[1]["error"] == (
        "ValueError: Lenient returned a MetricResult named 'accuracy', but the metric is named 'lenient' "
        "(use self.passed/failed/skipped, or MetricResult(name=self.name, ...))"
    )


def test_records_are_valid_utf8_whatever_the_tool_returned() -> None:
    """xdist sends records to the controller as UTF-8; a lone surrogate would end the whole session."""
    case = EvalCase(id="c", tool_id="t", function_call=FunctionCall(name="f"))
    run = run_tool(lambda case: {"text": "bad \udcff byte", "rows": [{"name": "\ud800", "n": 1 << 70}]}, case)
    record = CaseRecord(
        suite="s", case_id="c", case=case, inference=run.inference, metric=MetricResult(name="m", status="pass")
    )
    _, value = record.to_property()
    assert value["inference"] == {"text": "bad \ufffd byte", "rows": [{"name": "\ufffd", "n": 1 << 70}]}
    json.dumps(value, ensure_ascii=False).encode("utf-8")


def test_tool_and_metric_tracebacks_reach_the_record_and_the_tb_output(suite: pytest.Pytester) -> None:
    reprec = suite.inline_run("-k", "TestOutcomes", *INNER_ARGS)
    found = records(reprec)
    tool, also = found["TestOutcomes::test_case[broken]"]
    assert also["traceback"] == tool["traceback"]  # one tool run: the same traceback on every metric
    assert tool["error_source"] == "tool"
    assert tool["traceback"].splitlines()[-3:] == [
        '  File "test_suite.py", line 20, in echo',
        '    raise ValueError(f"tool exploded on {case.id}")',
        "ValueError: tool exploded on broken",
    ]
    assert "evaljig_cases" not in tool["traceback"]  # only the user's frames
    calls_ = [r for r in reprec.getreports("pytest_runtest_logreport") if r.when == "call"]
    failed = {r.nodeid.split("[")[1].rstrip("]"): r for r in calls_}
    assert 'raise KeyError("metric exploded")' in str(failed["metric_error"].longrepr)
    assert str(failed["broken"].longrepr).count("Traceback (most recent call last)") == 1  # the tool's, once


TYPO_SUITE = """
from evaljig_cases import Metric, ToolEval, load_cases


class Ok(Metric):
    def evaluate(self, case, inference):
        return self.passed()


class TestWeather(ToolEval):
    tool_id = "weather"
    cases = load_cases("cases")
    metrics = [Ok()]

    def run_tool(self, case):
        return {}


class TestCalendar(TestWeather):
    tool_id = "calendar"
"""


def test_a_case_whose_tool_id_no_class_runs_is_a_collection_error(pytester: pytest.Pytester) -> None:
    (pytester.path / "cases").mkdir()
    (pytester.path / "cases" / "weather.yaml").write_text(
        "- {id: paris, tool_id: weather, function_call: {name: forecast}}\n"
        "- {id: rome, tool_id: wether, function_call: {name: forecast}}\n"
        "- {id: standup, tool_id: calendar, function_call: {name: book}}\n"
    )
    pytester.makepyfile(test_typo=TYPO_SUITE)
    result = pytester.runpytest(*INNER_ARGS)
    result.assert_outcomes(errors=1)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting test_typo.py*",
            "cases/weather.yaml: case 'rome' has tool_id 'wether', which no test class runs "
            "(known tool ids: calendar, weather)",
        ]
    )
