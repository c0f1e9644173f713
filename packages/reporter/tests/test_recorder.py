from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from evaljig_report import case_schema, merge, schema_errors
from evaljig_report._layout import Layout
from evaljig_report._recorder import Recorder, write_session_index
from evaljig_report._schema import ARTIFACT_FILE

from .report_samples import CSV, PNG, b64, make_record


@pytest.fixture
def recorder(tmp_path: Path) -> Recorder:
    return Recorder(Layout(tmp_path, "run1", "tests", "gw0"))


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_the_schema_ships_with_the_package() -> None:
    schema = case_schema()
    assert schema["$schema"].endswith("2020-12/schema")
    assert {"schema_version", "case", "inference", "metrics"} <= set(schema["required"])


def test_the_artifact_file_pattern_is_the_schemas() -> None:
    assert f"^{ARTIFACT_FILE.pattern}$" == case_schema()["$defs"]["artifact"]["properties"]["file"]["pattern"]


def test_metrics_of_one_case_fold_into_one_valid_case_file(recorder: Recorder) -> None:
    artifacts = [
        {"name": "plot.png", "mime_type": "image/png", "base64": b64(PNG)},
        {"name": "rows.csv", "mime_type": "text/csv", "base64": b64(CSV)},
    ]
    first = recorder.add_record(make_record("sum", "exact", artifacts=artifacts), nodeid="t.py::T::test_exact[sum]")
    second = recorder.add_record(make_record("sum", "judge", "fail", reason="too terse"), nodeid="t.py::T::test_judge")
    assert first == second
    doc = load(first)
    assert schema_errors(doc) == []
    assert doc["status"] == "fail"
    assert [(m["name"], m["status"]) for m in doc["metrics"]] == [("exact", "pass"), ("judge", "fail")]
    # base64 moved out; nothing the tool did not return is added
    assert doc["inference"] == {"output": "result of sum"}
    assert [(a["file"], a["bytes"]) for a in doc["artifacts"]] == [("plot.png", len(PNG)), ("rows.csv", len(CSV))]
    assert (first.parent / "plot.png").read_bytes() == PNG
    assert sorted(p.name for p in first.parent.iterdir()) == ["case.json", "plot.png", "rows.csv"]


@pytest.mark.parametrize(
    ("recorded", "kept"), [(0.25, 0.25), (0, 0.0), (None, 2.0), (-1.0, 2.0), (math.inf, 2.0), (True, 2.0), ("1", 2.0)]
)
def test_a_metric_takes_its_records_duration_when_it_gives_a_usable_one(
    recorder: Recorder, recorded: object, kept: float
) -> None:
    """A tool-eval case scores every metric in one item: each record says how long its metric took."""
    record = {**make_record("timed"), "duration_s": recorded}
    (metric,) = load(recorder.add_record(record, nodeid="t.py::T::test_case[timed]", duration=2.0))["metrics"]
    assert metric["duration_s"] == kept


def test_malformed_base64_is_recorded_as_an_error_on_the_case(recorder: Recorder) -> None:
    bad = [{"name": "plot.png", "mime_type": "image/png", "base64": "%%% not base64 %%%"}]
    doc = load(recorder.add_record(make_record("broken", artifacts=bad)))
    assert schema_errors(doc) == []
    assert doc["status"] == "error"
    assert doc["errors"][0].startswith("artifact 'plot.png': malformed base64")
    assert doc["artifacts"][0]["status"] == "error"


def test_a_record_error_makes_the_case_an_error(recorder: Recorder) -> None:
    doc = load(recorder.add_record(make_record("boom", error="ToolError: timed out")))
    assert doc["status"] == "error"
    assert doc["errors"] == ["exact: ToolError: timed out"]


@pytest.mark.parametrize("record", [None, "text", {"metric": {"status": "maybe"}}])
def test_malformed_records_become_errors_not_crashes(recorder: Recorder, record: object) -> None:
    doc = load(recorder.add_record(record, nodeid="t.py::T::test_x"))
    assert schema_errors(doc) == []
    assert doc["status"] == "error"
    assert doc["source"]["case_id"] == "test_x"


def test_unserialisable_values_are_kept_as_their_repr(recorder: Recorder) -> None:
    record = make_record("odd")
    record["case"]["when"] = object
    doc = load(recorder.add_record(record))
    assert doc["case"]["when"] == "<class 'object'>"


def test_values_orjson_refuses_are_still_written(recorder: Recorder, tmp_path: Path) -> None:
    record = make_record("big", reason="bad \udcff byte")
    record["inference"] = {"n": math.factorial(25), "huge": 10**400, "text": "a\ud800b", "nan": math.nan}
    record["case"]["\udc80key"] = -(2**70)
    doc = load(recorder.add_record(record))
    assert schema_errors(doc) == []
    assert doc["errors"] == []
    assert doc["inference"] == {
        "n": 15511210043330985984000000,
        "huge": "<1329-bit int>",
        "text": "a\ufffdb",
        "nan": None,
    }
    assert doc["case"]["\ufffdkey"] == -(2**70)
    assert doc["metrics"][0]["reason"] == "bad \ufffd byte"
    assert recorder.write_index() is not None
    assert merge([tmp_path], tmp_path / "merged").counts["pass"] == 1


def test_a_record_that_cannot_be_stored_is_an_error_on_its_case(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("evaljig_report._casefile.write_artifacts", disk_full)
    doc = load(recorder.add_record(make_record("full", artifacts=[]), nodeid="t.py::T::test_exact[full]"))
    assert doc["status"] == "error"
    assert doc["errors"] == [
        "record of t.py::T::test_exact[full] could not be stored: OSError: [Errno 28] No space left on device"
    ]


def test_a_metric_recorded_by_two_tests_is_an_error_not_a_silent_replacement(recorder: Recorder) -> None:
    recorder.add_record(make_record("c", "accuracy", "fail"), nodeid="t.py::T::test_strict")
    recorder.add_record(make_record("c", "accuracy", "fail"), nodeid="t.py::T::test_strict")  # a rerun replaces
    doc = load(recorder.add_record(make_record("c", "accuracy", "pass"), nodeid="t.py::T::test_lenient"))
    assert doc["status"] == "error"
    assert doc["errors"] == [
        "metric 'accuracy' recorded by two tests, t.py::T::test_strict (fail) and t.py::T::test_lenient (pass); "
        "only the later is kept"
    ]


def test_plain_tests_are_recorded_with_the_pytest_metric(recorder: Recorder) -> None:
    doc = load(recorder.add_plain(nodeid="t.py::test_plain[1]", status="skip", reason="no gpu"))
    assert schema_errors(doc) == []
    assert (doc["kind"], doc["status"], doc["source"]["suite"], doc["source"]["case_id"]) == (
        "pytest",
        "skip",
        "t.py",
        "test_plain[1]",
    )


def test_worker_and_session_indexes(tmp_path: Path) -> None:
    for worker in ("gw0", "gw1"):
        recorder = Recorder(Layout(tmp_path, "run1", "tests", worker))
        recorder.add_record(make_record(f"c-{worker}"))
        recorder.add_record(make_record("c-shared", status="fail"))
        assert recorder.write_index() == tmp_path / "run1" / "tests" / worker / "index.json"
    session = write_session_index(Layout(tmp_path, "run1", "tests", "main"))
    assert session is not None
    index = load(session)
    assert index["totals"] == {"pass": 2, "fail": 2}
    assert [(w["worker"], w["index"], w["cases"]) for w in index["workers"]] == [
        ("gw0", "gw0/index.json", 2),
        ("gw1", "gw1/index.json", 2),
    ]


def test_nothing_recorded_writes_nothing(tmp_path: Path) -> None:
    assert Recorder(Layout(tmp_path, "r", "s", "w")).write_index() is None
    assert write_session_index(Layout(tmp_path, "r", "s", "main")) is None
    assert list(tmp_path.iterdir()) == []


def test_a_tool_error_and_its_traceback_are_kept_once_per_case(recorder: Recorder) -> None:
    trace = 'Traceback (most recent call last):\n  File "tools.py", line 3, in run\n    raise ValueError("boom")\n'
    trace += "ValueError: boom"
    for metric in ("exact", "judge", "length"):
        record = make_record("c1", metric, "fail", error="ValueError: boom")
        record.update(error_source="tool", traceback=trace)
        recorder.add_record(record, nodeid=f"t.py::T::test_metric[c1-{metric}]")
    metric_error = make_record("c1", "extra", "fail", error="KeyError: 'x'")
    metric_error.update(error_source="metric", traceback="Traceback ...\nKeyError: 'x'")
    path = recorder.add_record(metric_error, nodeid="t.py::T::test_metric[c1-extra]")
    doc = load(path)
    assert doc["errors"] == ["tool raised: ValueError: boom", "extra: KeyError: 'x'"]
    assert doc["tracebacks"] == [
        {"where": "tool", "message": "ValueError: boom", "traceback": trace},
        {"where": "metric:extra", "message": "KeyError: 'x'", "traceback": "Traceback ...\nKeyError: 'x'"},
    ]
    assert schema_errors(doc) == []


def test_a_huge_traceback_is_cut_to_its_end(recorder: Recorder) -> None:
    record = make_record("c1", "exact", "fail", error="ValueError: boom")
    record.update(error_source="tool", traceback="x" * 100_000 + "ValueError: boom")
    (entry,) = load(recorder.add_record(record, nodeid="t.py::T::test_metric[c1-exact]"))["tracebacks"]
    assert len(entry["traceback"]) == 8000
    assert entry["traceback"].endswith("ValueError: boom")
