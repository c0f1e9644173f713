"""A team following the tool-eval proposal adopts evaljig unchanged: its case file, markers and tool results.

End to end through the real plugin: a proposal-shaped case file, a ``ToolEval`` marked ``evals``/``tools``
whose tool returns the proposal's result shape, recorded by the reporter plugin into case.json.
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
CSV = b"region,revenue\nnorth,40\nsouth,2\n"

#: The proposal-shaped case file the loading tests read too.
CASE_FILE = Path(__file__).parent / "aliased_cases" / "analysis.json"

SUITE = f"""
import base64
import pytest
from evaljig_cases import Metric, ToolEval, load_cases

PNG, CSV = {PNG!r}, {CSV!r}


class AnswerMatches(Metric):
    def evaluate(self, case, inference):
        outputs = inference["function_response"]["outputs"]
        ok = outputs == [{{"answer": case.expectations["answer"]}}]
        return self.passed() if ok else self.failed(f"got {{outputs}}")


@pytest.mark.evals
@pytest.mark.tools("analysis_code_execution")
class TestAnalysisCodeExecution(ToolEval):
    cases = load_cases("cases.json")[:1]
    metrics = [AnswerMatches()]

    def run_tool(self, case):
        (frame,) = case.artifact_mock["dataframes"]
        return {{
            "id": "inference-" + case.case_id,
            "status": "success",
            "logs": "", "code": "df.revenue.sum()", "code_output": "42", "text_summary": "Revenue is 42.",
            "function_response": {{
                "tool_id": case.tool_id,
                "outputs": [{{"answer": sum(row["revenue"] for row in frame)}}],
                "artifact_parts": {{
                    "filenames": ["chart.png", "frame.csv", "notes.txt"],
                    "bytes": [base64.b64encode(b).decode() for b in (PNG, CSV, b"hello")],
                    "mimetypes": ["image/png", "text/csv", "text/plain"],
                }},
            }},
        }}
"""


def test_proposal_case_files_markers_and_results_work_unchanged(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(CASE_FILE, pytester.path / "cases.json")
    pytester.makepyfile(test_analysis=SUITE)
    monkeypatch.setenv("EVALJIG_RUN", "r1")
    monkeypatch.setenv("EVALJIG_SESSION", "tests")
    result = pytester.runpytest("-p", "no:cacheprovider", "--strict-markers", "--assert=plain")
    result.assert_outcomes(passed=1)

    (case_json,) = (pytester.path / "reports").rglob("case.json")
    text = case_json.read_text(encoding="utf-8")
    doc = json.loads(text)
    assert (doc["case"]["case_id"], doc["case"]["tool_id"], doc["case"]["function_call"]["name"]) == (
        "sales_total",
        "analysis_code_execution",
        "run_code",
    )
    assert doc["inference"]["status"] == "success"
    assert doc["inference"]["function_response"]["artifacts"][2] == {
        "kind": "binary",
        "mimetype": "text/plain",
        "skipped": True,
        "reason": "type 'text/plain' is not an image or CSV",
    }
    assert sorted(p.name for p in case_json.parent.iterdir()) == ["case.json", "chart.png", "frame.csv"]
    assert (case_json.parent / "frame.csv").read_bytes() == CSV
    assert base64.b64encode(PNG).decode() not in text
