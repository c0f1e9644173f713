"""In a real headless Chromium: no link of report.html runs script, and the page's CSP stops injected script.

Skips where chromium is not installed, like test_html_browser. Nothing here waits on time:
every check reads the DOM or the console after a navigation's load event or a synchronous click.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest

from .report_samples import Populate
from .test_html import CHROMIUM_FLAGS, chromium
from .test_html_links import SVG, make_hostile_report

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency: make setup")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = chromium()
    if path is None:
        pytest.skip("chromium is not installed (apt-get install chromium, or set EVALJIG_CHROMIUM)")
    with playwright_api.sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=path, args=[f for f in CHROMIUM_FLAGS if f != "--headless"])
        yield launched
        launched.close()


def console_of(browser: Any, url: str) -> list[str]:
    """Every console message and page error of a fresh tab that loads ``url``."""
    page = browser.new_page()
    messages: list[str] = []
    page.on("console", lambda m: messages.append(m.text))
    page.on("pageerror", lambda e: messages.append(str(e)))
    try:
        page.goto(url)
    finally:
        page.close()
    return messages


def test_no_link_beside_the_report_runs_script(browser: Any, tmp_path: Path, populate: Populate) -> None:
    report = make_hostile_report(tmp_path, populate)
    page = browser.new_page()
    page.goto(report.as_uri() + "#q=draws")
    page.click("tr.case")
    images = page.eval_on_selector_all("img.artifact", "is => is.map(i => i.getAttribute('src').split(',')[0])")
    # the SVG is shown, as an image (so is the HTML file the case file calls a PNG: an image tag runs nothing)
    assert images == ["data:image/png;base64", "data:image/svg+xml;base64", "data:image/png;base64"]
    hrefs = page.eval_on_selector_all("td.detail .artifact-box a", "as => as.map(a => a.getAttribute('href'))")
    files = [h for h in hrefs if not h.startswith("data:")]
    ran = [m for href in files for m in console_of(browser, urljoin(report.as_uri(), href)) if "pwned" in m]
    assert ran == []
    assert [Path(h).name for h in files] == ["plot.png"]
    with page.expect_download() as download:
        page.click("a[download='evil.svg']")
    assert Path(download.value.path()).read_bytes() == SVG
    page.close()


def test_the_csp_stops_an_injected_inline_handler(browser: Any, tmp_path: Path, populate: Populate) -> None:
    report = make_hostile_report(tmp_path, populate)
    page = browser.new_page()
    page.goto(report.as_uri())
    assert page.eval_on_selector_all("tr.case", "rs => rs.length") == 1  # the page's own (hashed) script ran
    ran = page.evaluate(
        """() => {
          const a = document.createElement("a");
          a.setAttribute("onclick", "window.__pwned = true");
          document.body.append(a);
          a.click();
          return window.__pwned === true;
        }"""
    )
    assert ran is False
    page.close()
