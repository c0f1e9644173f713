"""The behaviour tables in the docs are the code's table: a new or reworded behaviour fails here until documented."""

from __future__ import annotations

import html
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from evaljig_gateway import BEHAVIOUR_TABLE

ROOT = Path(__file__).resolve().parents[3]
HEADER = "| model name contains | behaviour |"
#: every page that shows the table: the guide and the package's PyPI page
PAGES = [ROOT / "docs" / "gateway.md", ROOT / "packages" / "gateway-stub" / "README.md"]


def behaviour_tables(markdown: str) -> list[list[tuple[str, str]]]:
    """Every table headed ``HEADER`` as (token, description) rows, Markdown rendering undone.

    Tokens are code spans; descriptions may escape ``<N>`` as ``&lt;N&gt;`` so it renders.
    """
    tables: list[list[tuple[str, str]]] = []
    lines = markdown.splitlines()
    for n, line in enumerate(lines):
        if line.strip() != HEADER:
            continue
        rows: list[tuple[str, str]] = []
        for row in lines[n + 2 :]:
            if not row.startswith("|"):
                break
            cells = [cell.strip() for cell in row.strip().strip("|").split(" | ")]
            assert len(cells) == 2, f"a behaviour row needs two cells: {row!r}"
            rows.append((cells[0].strip("`"), html.unescape(cells[1])))
        tables.append(rows)
    return tables


def test_the_parser_reads_tokens_and_unescapes_descriptions() -> None:
    text = f"intro\n\n{HEADER}\n|---|---|\n| `fail-<N>` | first N of &lt;N&gt; |\n| `x` | y |\n\nafter | not a row\n"
    assert behaviour_tables(text) == [[("fail-<N>", "first N of <N>"), ("x", "y")]]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_docs_table_equals_the_code(page: Path) -> None:
    tables = behaviour_tables(page.read_text(encoding="utf-8"))
    assert len(tables) == 1, f"{page.name}: expected one behaviour table, found {len(tables)}"
    documented, code = tables[0], list(BEHAVIOUR_TABLE)
    missing = [token for token, _ in code if token not in dict(documented)]
    stale = [token for token, _ in documented if token not in dict(code)]
    assert not missing, f"{page.name}: behaviours missing from the docs: {missing}"
    assert not stale, f"{page.name}: documented behaviours the gateway does not have: {stale}"
    assert documented == code, f"{page.name}: the table's order or wording differs from BEHAVIOUR_TABLE"


def test_the_cli_prints_the_same_table(capsys: pytest.CaptureFixture[str]) -> None:
    """``evaljig-gateway behaviours`` (through its console-script entry point) prints exactly these rows."""
    (script,) = entry_points(group="console_scripts", name="evaljig-gateway")
    assert script.load()(["behaviours"]) == 0
    assert behaviour_tables(capsys.readouterr().out) == [list(BEHAVIOUR_TABLE)]
