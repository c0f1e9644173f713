"""``--html``: one self-contained page, checked as text and in a real headless Chromium at 1280 and 390 px.

The browser checks read the DOM after the page's synchronous script ran (``goto`` waits for the
load event, a checkbox change dispatches synchronously), so nothing waits on time. Screenshots go
to the test's tmp dir. Skips with a hint where Chromium is missing (``make browser`` installs it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ci.browser import SKIP_REASON, find_chromium

from .gitrepo import GitRepo, make_repo

FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"]
DESKTOP = {"width": 1280, "height": 900}
NARROW = {"width": 390, "height": 844}
LONG = "a-very-long-unbreakable-key-" * 12


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo: GitRepo = make_repo(tmp_path_factory.mktemp("html") / "team")
    repo.write("golden/evals/test_cfg/test_config.yaml", f"temperature: 0.0\n{LONG}: 1\n")
    repo.write("golden/evals/test_cfg/test_format.yaml", "a: 1\n")
    repo.write("golden/evals/test_cfg/test_gone.yaml", "g: 1\n")
    repo.write("golden/evals/test_cfg/test_script.txt", "plain\n")
    repo.commit()
    repo.write("golden/evals/test_cfg/test_config.yaml", f"temperature: 0.3\n{LONG}: 2\n")
    repo.write("golden/evals/test_cfg/test_format.yaml", "a:   1\n")
    (repo.root / "golden/evals/test_cfg/test_gone.yaml").unlink()
    repo.write("golden/evals/test_cfg/test_new.yaml", "n: 1\n")
    repo.write("golden/evals/test_cfg/test_script.txt", "<script>alert(1)</script>\n")
    out = repo.root.parent / "review.html"
    done = repo.review("--html", str(out))
    assert done.returncode == 0, done.stderr
    return out


def test_the_page_is_self_contained_and_escaped(page_file: Path) -> None:
    text = page_file.read_text(encoding="utf-8")

    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)  # no external asset
    assert "<script>alert(1)</script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert text.count('<li class="entry"') == 5


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency: make setup")
    path = find_chromium()
    if path is None:
        pytest.skip(SKIP_REASON)
    with playwright_api.sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=path, args=FLAGS)
        yield launched
        launched.close()


def _open(browser: Any, url: str, viewport: dict[str, int]) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport=viewport)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    return page, errors


def _visible(page: Any) -> list[str]:
    return list(page.eval_on_selector_all("li.entry:not([hidden])", "es => es.map(e => e.dataset.category)"))


@pytest.mark.parametrize("viewport", [DESKTOP, NARROW], ids=["1280", "390"])
def test_renders_filters_and_fits_the_width(
    browser: Any, page_file: Path, tmp_path: Path, viewport: dict[str, int]
) -> None:
    page, errors = _open(browser, page_file.as_uri(), viewport)

    assert _visible(page) == ["value-changed", "value-changed", "new", "removed", "format-only"]
    assert page.is_visible("li.entry[data-category=value-changed] pre")  # value changes open
    assert "temperature: 0.0 → 0.3" in page.inner_text("li.entry >> nth=0")
    assert page.inner_text("#shown") == "5 of 5 shown"
    page.screenshot(path=str(tmp_path / f"review-{viewport['width']}.png"), full_page=True)
    page.uncheck("input[value=format-only]")
    page.uncheck("input[value=new]")
    assert _visible(page) == ["value-changed", "value-changed", "removed"]
    assert page.inner_text("#shown") == "3 of 5 shown"
    assert page.evaluate("location.hash") == "#hide=new,format-only"
    page.screenshot(path=str(tmp_path / f"review-{viewport['width']}-filtered.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]  # no sideways scroll
    assert errors == []


def test_a_link_reproduces_the_filtered_view(browser: Any, page_file: Path) -> None:
    page, errors = _open(browser, page_file.as_uri() + "#hide=value-changed", DESKTOP)

    assert _visible(page) == ["new", "removed", "format-only"]
    assert not page.is_checked("input[value=value-changed]")
    assert errors == []
