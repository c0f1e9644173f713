"""ci/check_wheels.py's metadata rules, on METADATA texts: each missing piece is one named problem."""

from __future__ import annotations

import email.parser
from pathlib import Path
from types import ModuleType

import pytest

from ci import check_wheels

ROOT = Path(__file__).resolve().parents[2]
VERSION = (ROOT / "VERSION").read_text(encoding="utf-8").strip()
URLS = "".join(
    f"Project-URL: {label}, https://github.com/evaljig/evaljig{tail}\n"
    for label, tail in [("Homepage", ""), ("Documentation", "/docs"), ("Source", "/x"), ("Issues", "/issues")]
)
GOOD = (
    f"Metadata-Version: 2.4\nName: evaljig-gateway\nVersion: {VERSION}\nSummary: a gateway\n{URLS}"
    "License-Expression: Apache-2.0\nLicense-File: LICENSE\n"
    "Classifier: Framework :: Pytest\nClassifier: Programming Language :: Python :: 3.11\n"
    "Classifier: Programming Language :: Python :: 3.12\nClassifier: Programming Language :: Python :: 3.13\n"
    "Requires-Python: >=3.11\nRequires-Dist: evaljig-common\nDescription-Content-Type: text/markdown\n\n# readme\n"
)


@pytest.fixture(scope="module")
def check() -> ModuleType:
    return check_wheels


def problems(check: ModuleType, text: str, *, plugin: bool = True, pins: tuple[str, ...] = ()) -> list[str]:
    metadata = email.parser.Parser().parsestr(text)
    found: list[str] = check.metadata_problems(metadata, "evaljig-gateway", pytest_plugin=plugin, pins=pins)
    return found


def test_complete_metadata_passes(check: ModuleType) -> None:
    assert problems(check, GOOD) == []


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        (f"Version: {VERSION}", "Version: 9.9.9", f"Version is '9.9.9', not '{VERSION}' (the VERSION file)"),
        ("License-Expression: Apache-2.0\n", "", "License-Expression is None, not 'Apache-2.0'"),
        ("License-File: LICENSE\n", "", "License-File LICENSE is missing"),
        ("Classifier: Framework :: Pytest\n", "", "classifier 'Framework :: Pytest' is missing"),
        (
            "Classifier: Programming Language :: Python :: 3.13\n",
            "",
            "classifier 'Programming Language :: Python :: 3.13' is missing",
        ),
        (
            "Project-URL: Issues, https://github.com/evaljig/evaljig/issues\n",
            "",
            "Project-URL Issues is missing or not under https://github.com/evaljig/evaljig",
        ),
        ("Description-Content-Type: text/markdown\n", "", "the README is not the long description (text/markdown)"),
        (
            "# readme\n",
            "# readme\nSee [the guide](../../docs/gateway.md), [web](https://x.org/a) and [here](#top).\n",
            "the long description links to repository paths that are dead on PyPI: ['../../docs/gateway.md']",
        ),
    ],
)
def test_each_missing_piece_is_named(check: ModuleType, old: str, new: str, problem: str) -> None:
    assert old in GOOD
    assert problems(check, GOOD.replace(old, new)) == [problem]


def test_framework_pytest_is_only_required_with_a_plugin(check: ModuleType) -> None:
    assert problems(check, GOOD.replace("Classifier: Framework :: Pytest\n", ""), plugin=False) == []


def test_the_meta_package_must_pin_every_package(check: ModuleType) -> None:
    pinned = GOOD.replace("Requires-Dist: evaljig-common\n", f"Requires-Dist: evaljig-common=={VERSION}\n")
    assert problems(check, pinned, pins=("evaljig-common",)) == []
    assert problems(check, GOOD, pins=("evaljig-common",)) == [f"Requires-Dist evaljig-common=={VERSION} is missing"]
