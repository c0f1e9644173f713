"""End to end: a data case run by ``ToolEval`` under xdist reaches the reporter as a schema-valid ``case.json``.

The two packages never import each other; they meet only in ``item.user_properties`` under the
record key. A tool's output with an undecodable byte (a lone surrogate, as ``surrogateescape``
keeps it) must cross xdist's UTF-8 channel and land in the report as U+FFFD.
"""

from __future__ import annotations

import json

import pytest

from evaljig_report import schema_errors

CASES = {"cases": [{"id": "echo-1", "tool_id": "echo", "function_call": {"name": "echo", "args": {"raw": "café"}}}]}

SUITE = """
from pathlib import Path

from evaljig_cases import Metric, ToolEval, load_cases


class Echoed(Metric):
    def evaluate(self, case, inference):
        return self.passed(f"saw {inference['text']}", score=1.0)


class TestEcho(ToolEval):
    cases = load_cases(Path(__file__).parent / "cases.json")
    metrics = (Echoed(),)

    def run_tool(self, case):
        raw = case.function_call.args["raw"].encode() + b" \\xff"  # a byte that is not UTF-8
        return {"text": raw.decode("utf-8", "surrogateescape")}
"""


def test_a_data_case_run_under_xdist_becomes_a_schema_valid_case_json(pytester: pytest.Pytester) -> None:
    pytester.makefile(".json", cases=json.dumps(CASES))
    pytester.makepyfile(test_echo=SUITE)
    reports = pytester.path / "reports"
    result = pytester.runpytest_subprocess(
        "-p", "xdist", "-n", "2", "-p", "no:cacheprovider", "-p", "no:randomly", f"--evaljig-report-dir={reports}"
    )  # fmt: skip
    result.assert_outcomes(passed=1)

    (path,) = reports.rglob("case.json")
    doc = json.loads(path.read_bytes().decode("utf-8"))  # strict UTF-8: no surrogate was written
    assert schema_errors(doc) == []
    assert doc["source"]["suite"] == "test_echo.py::TestEcho"
    assert doc["source"]["case_id"] == "echo-1"
    assert doc["source"]["worker"] in {"gw0", "gw1"}
    assert doc["status"] == "pass"
    assert doc["case"]["function_call"] == {"name": "echo", "args": {"raw": "café"}}
    assert doc["inference"]["text"] == "café \ufffd"
    (metric,) = doc["metrics"]
    assert (metric["name"], metric["status"], metric["score"]) == ("echoed", "pass", 1.0)
    assert metric["reason"] == "saw café \ufffd"
    assert metric["nodeid"] == "test_echo.py::TestEcho::test_case[echo-1]"
    assert doc["errors"] == []
