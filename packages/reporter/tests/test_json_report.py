"""The tool-eval proposal's pytest surface: ``evals``/``tools`` markers, case report paths in pytest-json-report."""

from __future__ import annotations

import json
from typing import Any

import pytest

MARKED_TESTS = """
import pytest


def record(request, case_id, metric):
    request.node.user_properties.append(("evaljig.case", {
        "suite": "test_marked.py::TestAnalysis", "case_id": case_id,
        "case": {"case_id": case_id, "tool_id": "analysis_code_execution", "function_call": {"name": "f", "args": {}}},
        "inference": {"status": "success", "function_response": {}},
        "metric": {"name": metric, "status": "pass", "score": 1.0, "reason": ""},
        "error": None,
    }))


@pytest.mark.evals
@pytest.mark.tools
@pytest.mark.tools("analysis_code_execution")
class TestAnalysis:
    @pytest.mark.parametrize("case_id", ["sales", "stock"])
    def test_metric(self, request, case_id):
        record(request, case_id, "exact")


def test_plain():
    pass
"""


@pytest.fixture
def marked(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makepyfile(test_marked=MARKED_TESTS)
    monkeypatch.setenv("EVALJIG_RUN", "r1")  # the session is "local": EVALJIG_SESSION is cleared
    return pytester


def extras(pytester: pytest.Pytester) -> dict[str, list[dict[str, Any]]]:
    report = json.loads((pytester.path / "report.json").read_text())
    return {t["nodeid"]: t.get("extras", []) for t in report["tests"]}


@pytest.mark.parametrize("reporting", [[], ["--evaljig-no-report"]], ids=["report", "no-report"])
def test_evals_and_tools_markers_pass_strict_markers(marked: pytest.Pytester, reporting: list[str]) -> None:
    result = marked.runpytest("-p", "no:cacheprovider", "--strict-markers", *reporting)
    result.assert_outcomes(passed=3)
    marks = marked.runpytest("-p", "no:cacheprovider", "--markers")
    marks.stdout.fnmatch_lines(["@pytest.mark.evals: *", "@pytest.mark.tools(tool_id=None): *"])


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["solo", "xdist"])
def test_each_eval_test_gets_its_case_report_path_as_a_json_report_extra(
    marked: pytest.Pytester, workers: list[str]
) -> None:
    result = marked.runpytest("-p", "no:cacheprovider", "--json-report", "--json-report-file=report.json", *workers)
    result.assert_outcomes(passed=3)
    found = extras(marked)
    assert found["test_marked.py::test_plain"] == []
    for case_id in ("sales", "stock"):
        (extra,) = found[f"test_marked.py::TestAnalysis::test_metric[{case_id}]"]
        assert (extra["name"], extra["format"]) == ("case_report", "text")
        assert extra["content"].startswith("reports/r1/local/")
        doc = json.loads((marked.path / extra["content"]).read_text())
        assert (doc["source"]["case_id"], doc["case"]["tool_id"]) == (case_id, "analysis_code_execution")


def test_plain_tests_recorded_with_all_tests_get_their_path_too(marked: pytest.Pytester) -> None:
    marked.runpytest(
        "-p", "no:cacheprovider", "--json-report", "--json-report-file=report.json", "--evaljig-all-tests", "-n", "2"
    )
    (extra,) = extras(marked)["test_marked.py::test_plain"]
    assert json.loads((marked.path / extra["content"]).read_text())["kind"] == "pytest"


def test_the_json_report_hook_is_optional(marked: pytest.Pytester) -> None:
    """Without pytest-json-report the hook has no spec; registering the plugin must still succeed."""
    result = marked.runpytest("-p", "no:cacheprovider", "-p", "no:pytest_jsonreport", "--strict-markers")
    result.assert_outcomes(passed=3)
    assert "pytest_json_modifyreport" not in result.stdout.str() + result.stderr.str()
