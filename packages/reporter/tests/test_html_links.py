"""report.html runs no script but its own: links are encoded file paths, SVG is never linked, the CSP is hashed."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from evaljig_report import merge

from .report_samples import PNG, Populate, b64, make_record

HOSTILE_WORKER = "javascript:alert(document.domain)"
SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg" onload="console.log(\'pwned by svg\')"><rect width="1" height="1"/></svg>'
)


class Scripts(HTMLParser):
    """Every ``<script>`` of a page, its type and exact text, and the CSP of its ``<meta>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.scripts: list[tuple[str | None, str]] = []
        self.csp: str | None = None
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "meta" and found.get("http-equiv") == "Content-Security-Policy":
            self.csp = found.get("content")
        if tag == "script":
            self._in_script = True
            self.scripts.append((found.get("type"), ""))

    def handle_data(self, data: str) -> None:
        if self._in_script:
            kind, text = self.scripts[-1]
            self.scripts[-1] = (kind, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False


def parse(report: Path) -> Scripts:
    page = Scripts()
    page.feed(report.read_text(encoding="utf-8"))
    return page


def details(report: Path) -> list[dict[str, Any]]:
    page = parse(report)
    return [json.loads(text) for kind, text in page.scripts if kind == "application/json" and '"artifacts"' in text]


@pytest.fixture
def hostile_report(tmp_path: Path, populate: Populate) -> Path:
    return make_hostile_report(tmp_path, populate)


def make_hostile_report(tmp_path: Path, populate: Populate) -> Path:
    """A worker folder named like a ``javascript:`` URL, an SVG with ``onload``, and a case file naming an HTML file."""
    artifacts = [
        {"name": "plot.png", "mime_type": "image/png", "base64": b64(PNG)},
        {"name": "evil.svg", "mime_type": "image/svg+xml", "base64": b64(SVG)},
    ]
    run = populate(worker="gw0", records=[make_record("draws", artifacts=artifacts)])
    (run / "tests" / "gw0").rename(run / "tests" / HOSTILE_WORKER)
    (case_file,) = run.rglob("case.json")
    (case_file.parent / "page.html").write_bytes(b"<script>console.log('pwned by html')</script>")
    doc = json.loads(case_file.read_text())
    doc["artifacts"].append({"name": "page", "mime_type": "image/png", "status": "written", "file": "page.html"})
    case_file.write_text(json.dumps(doc))
    merge([run], tmp_path / "out")
    return tmp_path / "out" / "report.html"


@pytest.mark.parametrize(
    ("rel", "href"),
    [
        ("javascript:alert(1)/case/x.png", "./javascript%3Aalert%281%29/case/x.png"),
        ("../main/case dir/x.png", "./../main/case%20dir/x.png"),
        ("../a#b/c?d/x.csv", "./../a%23b/c%3Fd/x.csv"),
        ("data:text/html,x/y/z.png", "./data%3Atext/html%2Cx/y/z.png"),
    ],
)
def test_a_link_is_an_encoded_relative_path(rel: str, href: str) -> None:
    from evaljig_report._details import link_href  # here: the other tests run against any version

    assert link_href(rel) == href


def test_no_link_can_be_read_as_a_url_scheme(hostile_report: Path) -> None:
    (detail,) = details(hostile_report)
    (href,) = [a["href"] for a in detail["artifacts"] if "href" in a]
    assert href.startswith("./../reports/run1/tests/javascript%3Aalert%28document.domain%29/")
    assert href.endswith("/plot.png")
    assert ":" not in href
    assert (hostile_report.parent / unquote(href)).is_file()  # and it still finds the file


def test_svg_and_other_active_files_are_never_linked(hostile_report: Path) -> None:
    (detail,) = details(hostile_report)
    by_name = {a["name"]: a for a in detail["artifacts"]}
    svg, page = by_name["evil.svg"], by_name["page"]
    assert "href" not in svg
    assert "href" not in page
    assert svg["note"] == "not linked: opened on its own, a .svg file can run script"
    assert page["note"].startswith("not linked: opened on its own, a .html file can run script")
    assert svg["data_uri"] == f"data:image/svg+xml;base64,{b64(SVG)}"  # shown through <img>, which runs no script
    assert svg["download_uri"] == f"data:application/octet-stream;base64,{b64(SVG)}"
    assert "download_uri" not in by_name["plot.png"]
    assert ".svg" not in "".join(re.findall(r'"href":"([^"]*)"', hostile_report.read_text()))


def test_the_csp_allows_only_the_page_script_by_hash(hostile_report: Path) -> None:
    page = parse(hostile_report)
    assert page.csp is not None
    directives = dict(d.strip().split(" ", 1) for d in page.csp.split(";"))
    runnable = [text for kind, text in page.scripts if kind != "application/json"]
    assert len(runnable) == 1
    digest = base64.b64encode(hashlib.sha256(runnable[0].encode()).digest()).decode()
    assert directives["script-src"] == f"'sha256-{digest}'"
    assert "unsafe-inline" not in directives["script-src"]
    assert directives["default-src"] == "'none'"
    assert directives["base-uri"] == "'none'"
