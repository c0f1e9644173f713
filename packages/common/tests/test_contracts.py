"""Each shared contract is spelled once, in evaljig_common, and every package imports it from there.

The sources of every workspace package are read as text (no other package is imported), so a second
definition anywhere (a copied literal, a private strict JSON reader) fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import evaljig_common
from evaljig_common import CANONICAL_BASE_URL, SYSTEM_FINGERPRINT

PACKAGES = Path(__file__).resolve().parents[2]
HOME = PACKAGES / "common" / "src" / "evaljig_common"


def sources() -> list[Path]:
    return sorted(p for p in PACKAGES.glob("*/src/**/*.py") if HOME not in p.parents)


def test_the_values() -> None:
    assert CANONICAL_BASE_URL == "http://127.0.0.1:8000/v1"
    assert SYSTEM_FINGERPRINT == "fp_evaljig"
    assert {"CANONICAL_BASE_URL", "SYSTEM_FINGERPRINT"} <= set(evaljig_common.__all__)


def test_the_sources_are_found() -> None:
    names = {p.relative_to(PACKAGES).parts[0] for p in sources()}
    assert {"gateway-stub", "config-service", "capability-corpus", "fixture-builder"} <= names


@pytest.mark.parametrize(
    ("what", "pattern"),
    [
        ("the canonical base URL", re.escape(CANONICAL_BASE_URL)),
        ("the system fingerprint", re.escape(SYSTEM_FINGERPRINT)),
        ("a strict JSON reader of its own", r"object_pairs_hook|parse_constant"),
        ("secret spellings of its own", r"quote_plus\(|b64encode\(b\"\\0\"|removeprefix\(\"Bearer"),
    ],
)
def test_no_package_spells_a_contract_again(what: str, pattern: str) -> None:
    found = [
        f"{path.relative_to(PACKAGES)}:{n}"
        for path in sources()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(pattern, line) and not line.lstrip().startswith(("#", '"""', "``"))
    ]
    assert not found, f"{what} is defined outside evaljig_common: {found}"
