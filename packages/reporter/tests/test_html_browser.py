"""report.html in a real headless Chromium (driven by playwright), at a desktop and a phone width.

Every check reads the DOM after the page's synchronous script ran (``goto`` waits for the
load event; clicks dispatch synchronously), so nothing here waits on time. Screenshots go to
the test's tmp dir, never into git. Skips with a hint where chromium is not installed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from evaljig_report import _details, merge

from .report_samples import CSV, PNG, Populate, b64, make_record
from .test_html import CHROMIUM_FLAGS, SKIP_REASON, chromium

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency: make setup")

DESKTOP = {"width": 1280, "height": 900}
NARROW = {"width": 390, "height": 844}
TRACEBACK = 'Traceback (most recent call last):\n  File "tool.py", line 3, in run\n    return 1 / 0\nZeroDivisionError'
#: Rows failures first: error, fail, skip, pass; then suite, case, session.
EXPECTED_ORDER = [
    "tests::tests/test_tools.py::TestCodeTool::crashes",
    "tests::tests/test_a.py::TestA::zeta",
    "tests::tests/test_tools.py::TestCodeTool::divides",
    "lighteval::tests/test_tools.py::TestCodeTool::gsm8k",
    "tests::tests/test_tools.py::TestCodeTool::sleeps",
    "tests::tests/test_tools.py::TestCodeTool::adds",
    "lighteval::tests/test_tools.py::TestCodeTool::mmlu",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = chromium()
    if path is None:
        pytest.skip(SKIP_REASON)
    with playwright_api.sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=path, args=[f for f in CHROMIUM_FLAGS if f != "--headless"])
        yield launched
        launched.close()


class Page:
    """One tab on the report; every console error and uncaught exception is kept."""

    def __init__(self, browser: Any, url: str, viewport: dict[str, int]) -> None:
        self.page = browser.new_page(viewport=viewport)
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(url)

    def cases(self) -> list[str]:
        return list(self.page.eval_on_selector_all("tr.case", "rs => rs.map(r => r.dataset.case)"))

    def statuses(self) -> list[str]:
        return list(self.page.eval_on_selector_all("tr.case", "rs => rs.map(r => r.dataset.status)"))

    def hash(self) -> str:
        return unquote(str(self.page.evaluate("location.hash")))

    def texts(self, selector: str) -> list[str]:
        return list(self.page.eval_on_selector_all(selector, "ns => ns.map(n => n.textContent)"))


@pytest.fixture
def report(tmp_path: Path, populate: Populate, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(_details, "MAX_IMAGE_BYTES", 200)
    artifacts = [
        {"name": "plot.png", "mime_type": "image/png", "base64": b64(PNG)},
        {"name": "big.png", "mime_type": "image/png", "base64": b64(PNG + b"\0" * 300)},
        {"name": "rows.csv", "mime_type": "text/csv", "base64": b64(CSV)},
    ]
    run = populate(
        records=[
            make_record("adds", artifacts=artifacts),
            make_record("adds", "judge", score=0.87654321),
            make_record("divides", status="fail", reason="expected 2, got 3"),
            make_record("crashes", error="ZeroDivisionError: division by zero"),
            make_record("sleeps", status="skip", reason="no sandbox"),
            make_record("zeta", suite="tests/test_a.py::TestA", status="fail", reason="wrong"),
        ]
    )
    populate(
        session="lighteval",
        worker="main",
        records=[make_record("mmlu", "accuracy", score=0.5), make_record("gsm8k", "accuracy", status="fail")],
    )
    (case_file,) = (p for p in run.rglob("case.json") if "crashes" in p.parent.name)
    doc = json.loads(case_file.read_text())
    doc["tracebacks"] = [{"where": "tool", "message": "ZeroDivisionError: division by zero", "traceback": TRACEBACK}]
    case_file.write_text(json.dumps(doc))
    merge([run], run / "merged")
    return run / "merged" / "report.html"


@pytest.mark.parametrize("viewport", [DESKTOP, NARROW], ids=["desktop", "narrow"])
def test_renders_filters_and_has_no_console_errors(
    browser: Any, report: Path, tmp_path: Path, viewport: dict[str, int]
) -> None:
    tab = Page(browser, report.as_uri(), viewport)
    assert tab.cases() == EXPECTED_ORDER
    assert tab.page.is_visible("#metric-summary")
    assert tab.page.is_visible("tr.case >> nth=0")
    tab.page.screenshot(path=str(tmp_path / f"report-{viewport['width']}.png"), full_page=True)
    tab.page.click("button[data-view=not-passing]")
    assert tab.statuses() == ["error", "fail", "fail", "fail"]
    tab.page.click("tr.case >> nth=0")  # the drill-down opens at this width too
    assert tab.page.is_visible("td.detail .expected")
    tab.page.screenshot(path=str(tmp_path / f"report-{viewport['width']}-not-passing.png"), full_page=True)
    scroll_width = tab.page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= viewport["width"]  # nothing forces a sideways scroll
    assert tab.errors == []


def test_status_filter_is_multi_choice_and_a_link_reproduces_the_view(browser: Any, report: Path) -> None:
    tab = Page(browser, report.as_uri(), DESKTOP)
    tab.page.click("button[data-status=skip]")
    tab.page.click("button[data-status=pass]")
    assert tab.statuses() == ["skip", "pass", "pass"]
    tab.page.fill("input[type=search]", "add")
    assert tab.cases() == ["tests::tests/test_tools.py::TestCodeTool::adds"]
    link = tab.hash()
    assert link == "#status=skip,pass&q=add"
    again = Page(browser, report.as_uri() + link, DESKTOP)
    assert again.cases() == ["tests::tests/test_tools.py::TestCodeTool::adds"]
    assert again.page.input_value("input[type=search]") == "add"
    pressed = again.page.eval_on_selector_all("button[aria-pressed=true]", "bs => bs.map(b => b.dataset.status)")
    assert pressed == ["skip", "pass"]
    again.page.click("button[data-view=not-passing]")
    assert again.hash() == "#status=error,fail&q=add"
    again.page.click("button[data-view=all]")
    again.page.fill("input[type=search]", "")
    assert again.hash() == ""
    assert len(again.cases()) == len(EXPECTED_ORDER)
    assert tab.errors == again.errors == []


def test_metric_and_session_summary_with_bar_charts(browser: Any, report: Path) -> None:
    tab = Page(browser, report.as_uri(), DESKTOP)
    metric_rows = tab.page.eval_on_selector_all(
        "#metric-summary tr[data-name]", "rs => rs.map(r => [...r.cells].map(c => c.textContent))"
    )
    assert metric_rows == [
        ["accuracy", "1 fail · 0 skip · 1 pass", "50 %", "0.25", "2"],
        ["exact", "2 fail · 1 skip · 2 pass", "50 %", "0.4", "5"],
        ["judge", "0 fail · 0 skip · 1 pass", "100 %", "0.877", "1"],
    ]  # the second cell is the bar chart; its text is its <title>
    bars = tab.page.eval_on_selector_all(
        "#metric-summary tr[data-name=exact] svg rect[data-status]",
        "rs => rs.map(r => [r.dataset.status, Number(r.getAttribute('width'))])",
    )
    assert bars == [["fail", 48], ["skip", 24], ["pass", 48]]
    assert tab.texts("#metric-summary tr[data-name=exact] svg title") == ["2 fail · 1 skip · 2 pass"]
    session_rows = tab.page.eval_on_selector_all(
        "#session-summary tr[data-name]", "rs => rs.map(r => [...r.cells].map(c => c.textContent))"
    )
    assert [[r[0], *r[2:]] for r in session_rows] == [
        ["lighteval", "50 %", "0.25", "2"],
        ["tests", "25 %", "0.479", "5"],
    ]
    assert tab.errors == []


def test_scores_rounded_with_the_exact_value_on_hover(browser: Any, report: Path) -> None:
    tab = Page(browser, report.as_uri(), DESKTOP)
    chip = tab.page.locator("tr.case[data-case$='::adds'] span.m", has_text="judge")
    assert chip.text_content() == "judge 0.877"
    assert chip.get_attribute("title") == "judge: 0.87654321"
    cell = tab.page.locator("#session-summary tr[data-name=tests] td >> nth=3").locator("span")
    assert cell.get_attribute("title") == str(2.87654321 / 6)
    assert tab.errors == []


def test_duration_column_and_sortable_columns(browser: Any, report: Path) -> None:
    tab = Page(browser, report.as_uri(), DESKTOP)
    durations = dict(zip(tab.cases(), tab.texts("tr.case td.c-duration"), strict=True))
    assert durations["tests::tests/test_tools.py::TestCodeTool::adds"] == "1 s"  # two metrics, 0.5 s each
    assert durations["tests::tests/test_tools.py::TestCodeTool::divides"] == "500 ms"
    tab.page.click("th[data-sort=duration] button")
    assert tab.cases()[-1] == "tests::tests/test_tools.py::TestCodeTool::adds"
    tab.page.click("th[data-sort=duration] button")
    assert tab.cases()[0] == "tests::tests/test_tools.py::TestCodeTool::adds"
    assert tab.hash() == "#sort=-duration"
    assert tab.page.get_attribute("th[data-sort=duration]", "aria-sort") == "descending"
    tab.page.click("th[data-sort=case] button")
    assert [c.rsplit("::", 1)[1] for c in tab.cases()] == [
        "adds",
        "crashes",
        "divides",
        "gsm8k",
        "mmlu",
        "sleeps",
        "zeta",
    ]
    again = Page(browser, report.as_uri() + "#sort=-duration", DESKTOP)
    assert again.cases()[0] == "tests::tests/test_tools.py::TestCodeTool::adds"
    assert tab.errors == again.errors == []


@pytest.mark.parametrize("viewport", [DESKTOP, NARROW], ids=["desktop", "narrow"])
def test_expected_and_actual_side_by_side(browser: Any, report: Path, viewport: dict[str, int]) -> None:
    tab = Page(browser, report.as_uri() + "#q=divides", viewport)
    tab.page.click("tr.case")
    expected = tab.page.locator("td.detail .expected")
    actual = tab.page.locator("td.detail .actual")
    assert expected.locator("pre").text_content() == '{\n  "output": "2"\n}'
    # the recorded inference: only what the tool returned (no status or function_response it never gave)
    actual_json = json.loads(actual.locator("pre").text_content() or "null")
    assert actual_json == {"output": "result of divides"}
    e, a = expected.bounding_box(), actual.bounding_box()
    assert e is not None
    assert a is not None
    if viewport is DESKTOP:
        assert a["y"] == e["y"]
        assert a["x"] >= e["x"] + e["width"]
    else:  # stacked on a phone
        assert a["y"] >= e["y"] + e["height"]
    assert tab.errors == []


def test_error_shown_once_with_its_traceback_collapsed(browser: Any, report: Path) -> None:
    tab = Page(browser, report.as_uri() + "#status=error", DESKTOP)
    tab.page.click("tr.case")
    detail = tab.page.locator("td.detail")
    assert detail.inner_text().count("division by zero") == 1
    assert tab.texts("td.detail .errors .err") == ["exact: ZeroDivisionError: division by zero"]
    traceback = detail.locator("details.traceback")
    assert traceback.get_attribute("open") is None
    assert not traceback.locator("pre").is_visible()
    traceback.locator("summary").click()
    assert traceback.locator("pre").text_content() == TRACEBACK
    assert tab.errors == []


def test_artifacts_are_downloadable_and_big_images_are_links(browser: Any, report: Path) -> None:
    tab = Page(browser, report.as_uri() + "#q=adds", DESKTOP)
    tab.page.click("tr.case")
    links = tab.page.eval_on_selector_all(
        "td.detail .artifact-box a", "as => as.map(a => [a.getAttribute('download'), a.getAttribute('href')])"
    )
    by_name = {(d, h.split(",", 1)[0] if h.startswith("data:") else Path(h).name) for d, h in links}
    assert by_name == {
        ("plot.png", "data:image/png;base64"),
        (None, "plot.png"),
        (None, "big.png"),
        ("rows.csv", "data:text/csv;base64"),
        (None, "rows.csv"),
    }
    for _, href in links:
        if not href.startswith("data:"):
            assert (report.parent / href).is_file()  # the files beside the report
    assert tab.page.locator("img.artifact").count() == 1  # big.png is over the limit: a link only
    assert tab.texts("td.detail .artifact-box a.file-link") == [
        "file beside the report",
        "open big.png",
        "file beside the report",
    ]
    with tab.page.expect_download() as download:
        tab.page.click("a[download='rows.csv']")
    assert download.value.suggested_filename == "rows.csv"
    assert Path(download.value.path()).read_bytes() == CSV
    assert tab.errors == []
