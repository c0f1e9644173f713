"""The docs hold together: links lead somewhere, every page is in the site, every export is documented.

``mkdocs build --strict`` (``nox -s lint``) checks the site; these run in the tests session, so a
broken link in the root README or a package README (which mkdocs only sees through includes)
fails as fast as any other test.
"""

from __future__ import annotations

import importlib
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PACKAGES = sorted(p.parent for p in (ROOT / "packages").glob("*/pyproject.toml"))
#: the root README is a front door, the guides live in docs/
README_LIMIT = 10 * 1024

INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.MULTILINE)
FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+).+?\1", re.DOTALL)
INCLUDE = re.compile(r"\{%\s*include-markdown\s+\"([^\"]+)\"")


def markdown_files() -> list[Path]:
    """README.md, every page under docs/, every package's README (its PyPI page)."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md")), *(p / "README.md" for p in PACKAGES)]


def relative_links(text: str) -> Iterator[str]:
    """Link targets outside code that point into the repository (no scheme, not just an anchor)."""
    prose = CODE_SPAN.sub("", FENCE.sub("", text))
    for target in [*INLINE_LINK.findall(prose), *REFERENCE_LINK.findall(prose)]:
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith(("#", "/")):
            continue
        yield target.split("#", 1)[0]


def nav_pages(nav: Any) -> Iterator[str]:
    """Every page path in mkdocs' ``nav`` (nested lists of ``{title: path-or-list}``)."""
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, list):
        for entry in nav:
            yield from nav_pages(entry)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from nav_pages(value)


def test_link_scanner_skips_code_urls_and_anchors() -> None:
    text = (
        '[a](docs/a.md#x) ![i](img.png "t") [web](https://x.org) [here](#top)\n'
        "`[no](code.md)`\n```\n[no](fenced.md)\n```\n[ref]: ../b.md\n"
    )
    assert sorted(relative_links(text)) == ["../b.md", "docs/a.md", "img.png"]


@pytest.mark.parametrize("page", markdown_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_points_at_a_file(page: Path) -> None:
    broken = [t for t in relative_links(page.read_text(encoding="utf-8")) if t and not (page.parent / t).exists()]
    assert not broken, f"{page.relative_to(ROOT)}: links to missing files: {broken}"


def test_every_docs_page_is_in_the_nav_and_every_nav_entry_exists() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["docs_dir"] == "docs"
    listed = list(nav_pages(config["nav"]))
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(set(pages) - set(listed)) == [], "pages under docs/ missing from mkdocs.yml's nav"
    assert sorted(set(listed) - set(pages)) == [], "nav entries in mkdocs.yml without a page"
    assert len(listed) == len(set(listed)), "a page is listed twice in the nav"


def test_every_package_readme_has_a_docs_page() -> None:
    """A new package gets a page in the site: some docs/packages/*.md includes its README."""
    included = {
        (page.parent / target).resolve()
        for page in (DOCS / "packages").glob("*.md")
        for target in INCLUDE.findall(page.read_text(encoding="utf-8"))
    }
    assert all(path.is_file() for path in included), "an include-markdown directive names a missing file"
    missing = [p.name for p in PACKAGES if (p / "README.md").resolve() not in included]
    assert not missing, f"packages whose README no docs/packages/*.md includes: {missing}"


def import_name(package: Path) -> str:
    """The import package a distribution ships (hatch's ``packages = ["src/<name>"]``)."""
    config = tomllib.loads((package / "pyproject.toml").read_text(encoding="utf-8"))
    (src,) = config["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    return str(src).removeprefix("src/")


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_every_exported_name_is_in_the_package_readme(package: Path) -> None:
    """A package's README is its PyPI page: every name in ``__all__`` is documented there."""
    exported = importlib.import_module(import_name(package)).__all__
    readme = (package / "README.md").read_text(encoding="utf-8")
    undocumented = [name for name in exported if f"`{name}`" not in readme]
    assert not undocumented, f"packages/{package.name}/README.md does not mention: {undocumented}"


def test_the_root_readme_stays_a_front_door() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    size = len(readme.encode("utf-8"))
    assert size <= README_LIMIT, f"README.md is {size} bytes: move the details to a guide in docs/"
    for command in ("make ci", "make lighteval"):
        assert f"`{command}`" in readme or f"\n{command} " in readme, f"README.md does not name {command}"
