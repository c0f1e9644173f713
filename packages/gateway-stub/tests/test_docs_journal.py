"""The journal's field table in docs/gateway.md names exactly what the code has.

The JSON column must be the keys ``GET /_gateway/calls`` returns, the attribute column real
``Call`` attributes: a renamed field fails here until the docs follow.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from evaljig_gateway import Call, Gateway

from .conftest import CHAT

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "gateway.md"
HEADER = "| JSON field (`GET /_gateway/calls`, `--journal`) | `Call` attribute (`gateway.calls()`) | what it holds |"


def journal_table() -> list[tuple[list[str], list[str]]]:
    """(JSON names, attribute names) per row; ``—`` means none."""
    lines = GUIDE.read_text(encoding="utf-8").splitlines()
    start = lines.index(HEADER) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        json_cell, attribute_cell, _ = (cell.strip() for cell in line.strip().strip("|").split(" | "))
        rows.append((re.findall(r"`([^`]+)`", json_cell), re.findall(r"`([^`]+)`", attribute_cell)))
    return rows


def test_the_json_column_is_what_the_gateway_returns(gateway: Gateway, http: httpx.Client) -> None:
    assert http.post("/v1/chat/completions", json=CHAT).status_code == 200
    (entry,) = http.get("/_gateway/calls").json()["calls"]
    documented = [name for names, _ in journal_table() for name in names]
    assert sorted(documented) == sorted(entry), "docs/gateway.md's journal table vs GET /_gateway/calls"


def test_the_attribute_column_names_call_attributes(gateway: Gateway, http: httpx.Client) -> None:
    assert http.post("/v1/chat/completions", json=CHAT).status_code == 200
    (call,) = gateway.calls()
    for _, attributes in journal_table():
        for name in attributes:
            assert hasattr(call, name), f"docs/gateway.md names Call.{name}, which does not exist"
    assert isinstance(call, Call)
    assert call.size == len(call.raw_body)
    assert not call.truncated
