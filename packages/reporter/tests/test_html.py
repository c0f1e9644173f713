"""report.html: self-contained, and every case shows up when a real browser renders it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ci.browser import SKIP_REASON, find_chromium
from evaljig_report import _html, merge, schema_errors

from .report_samples import CSV, PNG, Populate, b64, make_record

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium() -> str | None:
    """The browser ``make ci`` found or installed (ci/browser.py: never Ubuntu's snap stub)."""
    return find_chromium()


def dump_dom(report: Path, fragment: str, profile: Path) -> str:
    browser = chromium()
    if browser is None:
        pytest.skip(SKIP_REASON)
    proc = subprocess.run(
        [browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", f"{report.as_uri()}{fragment}"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return proc.stdout


@pytest.fixture
def report(tmp_path: Path, populate: Populate) -> Path:
    artifacts = [
        {"name": "../../plot.png", "mime_type": "image/png", "base64": b64(PNG)},
        {"name": "rows.csv", "mime_type": "text/csv", "base64": b64(CSV)},
    ]
    run = populate(
        records=[
            make_record("passes", artifacts=artifacts),
            make_record("fails", status="fail", reason="expected 2, got <b>3</b>"),
            make_record("errs", error="Traceback: boom"),
            make_record("skips", status="skip", reason="no sandbox"),
        ]
    )
    populate(session="lighteval", worker="main", records=[make_record("passes", "accuracy")])
    (run / "tests" / "gw0" / "junk").mkdir()
    (run / "tests" / "gw0" / "junk" / "case.json").write_text("{")
    merge([run], run / "merged")
    return run / "merged" / "report.html"


def test_report_is_self_contained(report: Path) -> None:
    text = report.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert "Content-Security-Policy" in text
    assert "<b>3</b>" not in text  # data is escaped into JSON, rendered as text


def test_every_case_is_shown_with_its_drill_down(report: Path, tmp_path: Path) -> None:
    dom = dump_dom(report, "#expand=all", tmp_path / "profile")
    shown = sorted(re.findall(r'<tr class="case" data-status="(\w+)" data-case="([^"]+)"', dom))
    assert shown == [
        ("error", "tests::tests/test_tools.py::TestCodeTool::errs"),
        ("fail", "tests::tests/test_tools.py::TestCodeTool::fails"),
        ("pass", "lighteval::tests/test_tools.py::TestCodeTool::passes"),
        ("pass", "tests::tests/test_tools.py::TestCodeTool::passes"),
        ("skip", "tests::tests/test_tools.py::TestCodeTool::skips"),
    ]
    assert dom.count("<h3>Inputs</h3>") == 5
    assert dom.count("<h3>Expected</h3>") == dom.count("<h3>Actual</h3>") == 5
    assert "run_code" in dom  # the function call
    assert "result of fails" in dom  # the tool output
    assert "expected 2, got &lt;b&gt;3&lt;/b&gt;" in dom  # metric reason, as text
    assert '<img class="artifact" src="data:image/png;base64,' in dom
    assert "<td>0.75</td>" in dom  # CSV preview
    assert "Traceback: boom" in dom
    assert "1 files could not be used" in dom


def test_status_filter(report: Path, tmp_path: Path) -> None:
    dom = dump_dom(report, "#status=fail", tmp_path / "profile")
    assert re.findall(r'<tr class="case" data-status="(\w+)"', dom) == ["fail"]


def test_large_runs_embed_details_of_non_passing_cases_only(
    tmp_path: Path, populate: Populate, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_html, "EMBED_ALL_LIMIT", 2)
    run = populate(records=[make_record(f"p{i}") for i in range(3)] + [make_record("f", status="fail")])
    merge([run], tmp_path / "merged")
    text = (tmp_path / "merged" / "report.html").read_text()
    assert len(re.findall(r'<script type="application/json" id="d\d+">', text)) == 1
    assert "details embedded for cases that did not pass only" in text


def embedded_rows(report: Path) -> list[list[Any]]:
    text = report.read_text()
    start = text.index('<script type="application/json" id="evaljig-rows">') + len(
        '<script type="application/json" id="evaljig-rows">'
    )
    rows: list[list[Any]] = json.loads(text[start : text.index("</script>", start)])
    return rows


def test_rows_are_listed_failures_first(report: Path) -> None:
    rows = embedded_rows(report)
    assert [(r[4], r[1], r[3]) for r in rows] == [
        ("error", "tests", "errs"),
        ("fail", "tests", "fails"),
        ("skip", "tests", "skips"),
        ("pass", "lighteval", "passes"),
        ("pass", "tests", "passes"),
    ]
    assert [r[0] for r in rows] == list(range(5))  # the index names each case's detail block


def test_large_runs_embed_errors_and_failures_before_skips(
    tmp_path: Path, populate: Populate, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_html, "EMBED_ALL_LIMIT", 2)
    monkeypatch.setattr(_html, "MAX_DETAILS", 2)
    records = [make_record("a-skip", status="skip"), make_record("b-fail", status="fail")]
    records += [make_record("c-pass"), make_record("z-error", error="boom")]
    merge([populate(records=records)], tmp_path / "merged")
    report = tmp_path / "merged" / "report.html"
    embedded = {r[3] for r in embedded_rows(report) if r[7]}
    assert embedded == {"z-error", "b-fail"}


def test_tracebacks_are_part_of_the_case_schema() -> None:
    doc = {
        "schema_version": 1,
        "kind": "eval",
        "source": {"run": "r", "session": "s", "worker": "w", "suite": "t", "case_id": "c"},
        "status": "error",
        "case": {},
        "inference": None,
        "metrics": [],
        "artifacts": [],
        "errors": ["boom"],
        "tracebacks": [{"where": "tool", "message": "boom", "traceback": "Traceback ...\nValueError: boom"}],
    }
    assert schema_errors(doc) == []
    doc["tracebacks"] = [{"where": "tool", "message": "boom"}]
    assert schema_errors(doc) == ["tracebacks/0: 'traceback' is a required property"]
