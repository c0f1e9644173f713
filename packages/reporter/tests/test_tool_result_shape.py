"""The tool-eval proposal's shapes are recorded beside evaljig's: artifact_parts, inference.status, index fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaljig_report import merge, schema_errors
from evaljig_report._layout import Layout
from evaljig_report._recorder import Recorder

from .report_samples import CSV, PNG, Populate, b64, make_record

WHERE = "inference.function_response.artifact_parts"
ZIP = b"PK\x05\x06" + bytes(18)


def proposal_result(parts: object) -> dict[str, Any]:
    """A tool result as the proposal's tools return it."""
    return {
        "id": "inference-1",
        "status": "success",
        "logs": "ran 3 lines",
        "code": "df.plot()",
        "code_output": "42",
        "text_summary": "Revenue is 42.",
        "function_response": {
            "tool_id": "analysis_code_execution",
            "query": "total revenue",
            "outputs": [{"answer": 42}],
            "artifact_parts": parts,
        },
    }


PARTS = {
    "filenames": ["chart.png", "rows.csv", "bundle.zip"],
    "bytes": [b64(PNG), b64(CSV), b64(ZIP)],
    "mimetypes": ["image/png", "text/csv", "application/zip"],
}


def record(case_id: str, inference: object, **extra: Any) -> dict[str, Any]:
    rec = make_record(case_id, **extra)
    rec["case"] = {
        "id": case_id,
        "description": "",
        "tool_id": "analysis_code_execution",
        "function_call": {"name": "run_code", "args": {"query": "total revenue"}},
        "expectations": {"answer": 42},
        "artifact_mocks": {},
    }
    rec["inference"] = inference
    return rec


@pytest.fixture
def recorder(tmp_path: Path) -> Recorder:
    return Recorder(Layout(tmp_path, "run1", "tests", "gw0"))


def test_artifact_parts_become_files_and_no_base64_stays_inline(recorder: Recorder) -> None:
    path = recorder.add_record(record("sales", proposal_result(PARTS)))
    text = path.read_text(encoding="utf-8")
    doc = json.loads(text)
    assert schema_errors(doc) == []
    assert sorted(p.name for p in path.parent.iterdir()) == ["case.json", "chart.png", "rows.csv"]
    assert ((path.parent / "chart.png").read_bytes(), (path.parent / "rows.csv").read_bytes()) == (PNG, CSV)
    assert not any(blob in text for blob in PARTS["bytes"])
    assert [(a["name"], a["status"], a.get("file")) for a in doc["artifacts"]] == [
        ("chart.png", "written", "chart.png"),
        ("rows.csv", "written", "rows.csv"),
        ("bundle.zip", "skipped", None),
    ]
    expected = proposal_result(None)
    del expected["function_response"]["artifact_parts"]
    expected["function_response"]["artifacts"] = [
        {"kind": "image", "mimetype": "image/png", "path": "chart.png"},
        {"kind": "csv", "mimetype": "text/csv", "path": "rows.csv"},
        {
            "kind": "binary",
            "mimetype": "application/zip",
            "skipped": True,
            "reason": "type 'application/zip' is not an image or CSV",
        },
    ]
    assert doc["inference"] == expected
    assert doc["errors"] == []


def test_case_json_carries_the_proposals_core_fields(recorder: Recorder) -> None:
    doc = json.loads(recorder.add_record(record("sales", proposal_result(None))).read_text())
    assert doc["case"]["case_id"] == doc["case"]["id"] == "sales"
    assert doc["case"]["tool_id"] == "analysis_code_execution"
    assert doc["case"]["function_call"] == {"name": "run_code", "args": {"query": "total revenue"}}
    inference = doc["inference"]
    assert (inference["status"], inference["function_response"]["outputs"]) == ("success", [{"answer": 42}])


def test_a_tool_that_raised_is_recorded_with_status_error(recorder: Recorder) -> None:
    doc = json.loads(recorder.add_record(record("boom", None, error="ValueError: no data")).read_text())
    assert doc["inference"] == {"status": "error", "function_response": None}
    assert doc["status"] == "error"


def test_an_evaljig_shaped_result_is_kept_as_returned(recorder: Recorder) -> None:
    """No ``status``/``function_response`` the tool never returned in case.json (the merged index still says
    ``inference_status: unknown``, see test_merged_index_has_the_proposals_fields)."""
    doc = json.loads(recorder.add_record(record("plain", {"answer": 42})).read_text())
    assert doc["inference"] == {"answer": 42}


@pytest.mark.parametrize(
    ("parts", "error"),
    [
        ("no", f"{WHERE} must be an object with filenames, bytes and mimetypes, not str"),
        ({"bytes": "abc"}, f"{WHERE}.bytes must be a list, not str"),
        ({"bytes": ["%%"], "mimetypes": ["image/png"]}, "artifact 'artifact_0': malformed base64: Only base64 data"),
    ],
)
def test_malformed_artifact_parts_are_errors_on_the_case(recorder: Recorder, parts: object, error: str) -> None:
    doc = json.loads(recorder.add_record(record("bad", proposal_result(parts))).read_text())
    assert doc["status"] == "error"
    assert [e[: len(error)] for e in doc["errors"]] == [error]
    assert "artifact_parts" not in doc["inference"]["function_response"]


def test_merged_index_has_the_proposals_fields(tmp_path: Path, populate: Populate) -> None:
    populate(worker="gw0", records=[record("sales", proposal_result(PARTS))])
    populate(worker="gw1", records=[make_record("plain", "exact", "fail", reason="off by one")])
    index = json.loads((merge([tmp_path / "reports"], tmp_path / "merged").out_dir / "index.json").read_text())
    assert index["runs"] == ["run1/tests/gw0", "run1/tests/gw1"]
    fields = ("node", "case_id", "tool_id", "status", "inference_status", "metrics")
    summary = [tuple(c[f] for f in fields) for c in index["cases"]]
    assert summary == [
        (
            "tests/test_tools.py::TestCodeTool",
            "plain",
            "code",
            "fail",
            "unknown",
            [{"name": "exact", "metric": "exact", "status": "fail", "score": 0.0, "reason": "off by one"}],
        ),
        (
            "tests/test_tools.py::TestCodeTool",
            "sales",
            "analysis_code_execution",
            "pass",
            "success",
            [{"name": "exact", "metric": "exact", "status": "pass", "score": 1.0, "reason": ""}],
        ),
    ]
