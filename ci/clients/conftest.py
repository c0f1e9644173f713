"""The real-client matrix (``nox -s clients``): each test fills one client x feature cell; the run ends with the table.

A test declares its cell with ``@pytest.mark.cell("openai", "structured")`` and imports its client
with :func:`client` (``pytest.importorskip``), so a client that is not installed is a SKIP, never an
error. Every test starts its own gateway on loopback (inspect-ai's share one per module: it keeps a
model's client for the process); every client gets that base URL and a fake key.
The table is printed by ``pytest_terminal_summary``: PASS, FAIL, SKIP or XFAIL (a known gateway bug,
``xfail(strict=True)``), with the count when several tests share a cell. A failure cell (the
gateway's issue-31 behaviours, ``matrix.FAILURES``) also records what the client raised or
returned, through the ``seen`` fixture; those lines follow the tables.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from .matrix import CLIENTS, FAILURES, FEATURES, matrix_lines, seen_lines, write_outcomes

FAKE_KEY = "sk-evaljig-fake-0000"
#: Where this run writes its outcomes for the merged table (set by ``nox -s clients``).
OUTCOMES_ENV = "EVALJIG_CLIENTS_OUTCOMES"
os.environ.setdefault("OPENAI_API_KEY", FAKE_KEY)  # clients built without an explicit key find this one
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def client(name: str) -> ModuleType:
    """Import a client library or skip the test: a client missing from the venv is a SKIP, never an error."""
    return pytest.importorskip(name, reason=f"{name} is not installed (ci/clients-requirements.txt)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cell(client, feature): the client x feature cell a real-client test fills")
    config.stash[_OUTCOMES] = defaultdict(list)
    config.stash[_SEEN] = {}


_OUTCOMES = pytest.StashKey[dict[tuple[str, str], list[str]]]()
_SEEN = pytest.StashKey[dict[tuple[str, str], str]]()


@pytest.fixture
def seen(request: pytest.FixtureRequest) -> Callable[[str], None]:
    """``seen(text)``: what the client raised or returned in this test's failure cell (printed after the tables)."""
    cell = _cell(request.node)
    if cell is None or cell[1] not in FAILURES:
        raise pytest.UsageError(f"{request.node.nodeid}: seen() needs a cell(client, failure) marker")

    def record(text: str) -> None:
        request.config.stash[_SEEN][cell] = text

    return record


def _cell(item: pytest.Item) -> tuple[str, str] | None:
    marker = item.get_closest_marker("cell")
    if marker is None:
        return None
    client_name, feature = marker.args
    if client_name not in CLIENTS or (feature not in FEATURES and feature not in FAILURES):
        raise pytest.UsageError(f"{item.nodeid}: cell({client_name!r}, {feature!r}) is not in the table")
    return client_name, feature


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report: pytest.TestReport = yield
    cell = _cell(item)
    if cell is None:
        return report
    if report.when == "call" or report.outcome != "passed":  # setup/teardown count only when they fail or skip
        if hasattr(report, "wasxfail"):
            outcome = "XFAIL" if report.skipped else "FAIL"  # an xfail that passes fails (strict)
        else:
            outcome = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}[report.outcome]
        item.config.stash[_OUTCOMES][cell].append(outcome)
    return report


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    outcomes = config.stash.get(_OUTCOMES, {})
    if not outcomes:
        return
    seen = config.stash.get(_SEEN, {})
    if os.environ.get(OUTCOMES_ENV):  # nox -s clients merges every venv's file into one table
        write_outcomes(Path(os.environ[OUTCOMES_ENV]), outcomes, seen)
    terminalreporter.section("real clients: client x feature")
    for line in [*matrix_lines(outcomes), "", *matrix_lines(outcomes, FAILURES), "", *seen_lines(seen)]:
        terminalreporter.write_line(line)
