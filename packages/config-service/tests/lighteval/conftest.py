"""Shared set-up of the LEV matrix: the committed fixtures, a gateway with the answer key, a summary."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evaljig_config import ProviderSpec, lighteval_available, load_provider_spec
from evaljig_gateway import Gateway

ROOT = Path(__file__).resolve().parents[4]
FIXTURES = ROOT / "fixtures"
FAKE_KEY_ENV = "EVALJIG_FAKE_API_KEY"
FAKE_KEY = "sk-evaljig-fake-0000"  # a placeholder the gateway ignores; must never appear in any file


@dataclass(frozen=True)
class Dataset:
    task: str
    """lighteval task spec, e.g. ``mini_mmlu|0``."""
    module: Path
    rows: int
    answer_key: dict[str, str]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip the matrix, saying how to run it, in a venv without lighteval (a bare ``pytest``).

    ``nox -s lighteval`` sets ``EVALJIG_REQUIRE_LIGHTEVAL=1``: there a missing lighteval fails.
    """
    if lighteval_available() or os.environ.get("EVALJIG_REQUIRE_LIGHTEVAL") == "1":
        return
    skip = pytest.mark.skip(reason="lighteval is not installed here: run `make lighteval`")
    for item in items:
        if "lighteval" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_KEY)


@pytest.fixture
def provider(gateway: Gateway) -> ProviderSpec:
    """The committed provider fixture, pointed at this worker's gateway."""
    return load_provider_spec(FIXTURES / "providers" / "fake-openai.json").with_base_url(gateway.base_url)


def _dataset(tmp_path_factory: pytest.TempPathFactory, name: str, task: str) -> Dataset:
    from evaljig_fixtures import load_dataset_package

    package = load_dataset_package(FIXTURES / "datasets" / f"{name}.eval752.zip")
    folder = tmp_path_factory.mktemp(name)
    package.extract_to(folder)
    return Dataset(f"{task}|0", folder / f"{task}.py", len(package.rows), dict(package.answer_key))


@pytest.fixture(scope="session")
def mini_mmlu(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return _dataset(tmp_path_factory, "mini-mmlu", "mini_mmlu")


@pytest.fixture(scope="session")
def polyglot(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return _dataset(tmp_path_factory, "polyglot", "polyglot")


@pytest.fixture
def lev(request: pytest.FixtureRequest) -> Any:
    """``lev("LEV-001", calls=40, ...)`` adds a row to the matrix summary printed at the end."""

    def record(lev_id: str, **facts: object) -> None:
        request.node.user_properties.append(("lev", json.dumps({"id": lev_id, **facts}, sort_keys=True)))

    return record


def assert_no_secret(folder: Path) -> None:
    leaked = [p for p in folder.rglob("*") if p.is_file() and FAKE_KEY.encode() in p.read_bytes()]
    assert not leaked, f"the api key was left in {leaked}"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    rows = []
    for outcome in ("passed", "failed", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            if getattr(report, "when", "call") != "call":
                continue
            for key, value in getattr(report, "user_properties", []):
                if key == "lev":
                    rows.append((json.loads(value), outcome, report.duration))
    if not rows:
        return
    terminalreporter.write_sep("=", "LEV matrix")
    for facts, outcome, duration in sorted(rows, key=lambda r: r[0]["id"]):
        lev_id = facts.pop("id")
        detail = ", ".join(f"{k}={v}" for k, v in facts.items())
        terminalreporter.write_line(f"{lev_id}  {outcome.upper():6}  {duration:6.1f}s  {detail}")
