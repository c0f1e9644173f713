"""The real-client matrix (``nox -s clients``): each test is one cell, client x feature, and the run ends with the table.

A test declares its cell with ``@pytest.mark.cell("openai", "structured")`` and imports its client
with :func:`client` (``pytest.importorskip``), so a client that is not installed is a SKIP, never an
error. Every test starts its own gateway on loopback; every client gets that base URL and a fake key.
The table is printed by ``pytest_terminal_summary``: PASS, FAIL, SKIP or XFAIL (a known gateway bug,
``xfail(strict=True)``), with the count when several tests share a cell.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator
from types import ModuleType

import pytest

from evaljig_gateway import Gateway

FAKE_KEY = "sk-evaljig-fake-0000"
#: The rows and columns of the table, in this order (a cell no test declares is blank).
CLIENTS = ("openai", "litellm", "pydantic-ai", "langchain-openai", "instructor", "lm-eval", "inspect-ai")
FEATURES = ("chat", "stream", "structured", "nested", "tools", "responses", "embeddings", "loglikelihood", "eval")
#: What the table says for a test's outcome; a cell shows the worst of its tests.
RANK = {"FAIL": 3, "XFAIL": 2, "SKIP": 1, "PASS": 0}

os.environ.setdefault("OPENAI_API_KEY", FAKE_KEY)  # clients built without an explicit key find this one
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


#: The gateway bug pydantic-ai's PromptedOutput and instructor's Mode.JSON expose (see docs/ci.md#real-clients).
PROMPTED_SCHEMA_BUG = (
    "gateway: response_format json_object answers {'answer': <text>} and ignores the JSON schema the client"
    " puts in the prompt (pydantic-ai PromptedOutput, instructor Mode.JSON), so the object fails validation"
)


def client(name: str) -> ModuleType:
    """Import a client library or skip the test: a client missing from the venv is a SKIP, never an error."""
    return pytest.importorskip(name, reason=f"{name} is not installed (ci/clients-requirements.txt)")


@pytest.fixture
def gateway() -> Iterator[Gateway]:
    """A fresh gateway with no answer key (tests needing one start their own ``Gateway(answers=...)``)."""
    with Gateway() as gw:
        yield gw


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cell(client, feature): the client x feature cell a real-client test fills")
    config.stash[_OUTCOMES] = defaultdict(list)


_OUTCOMES = pytest.StashKey[dict[tuple[str, str], list[str]]]()


def _cell(item: pytest.Item) -> tuple[str, str] | None:
    marker = item.get_closest_marker("cell")
    if marker is None:
        return None
    client_name, feature = marker.args
    if client_name not in CLIENTS or feature not in FEATURES:
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


def cell_text(results: list[str]) -> str:
    """One cell: ``-`` when no test fills it, the outcome when all agree, else each outcome with its count."""
    if not results:
        return "-"
    counts = {o: results.count(o) for o in sorted(set(results), key=RANK.__getitem__, reverse=True)}
    if len(counts) == 1:
        outcome, n = next(iter(counts.items()))
        return outcome if n == 1 else f"{outcome}({n})"
    return " ".join(f"{outcome}({n})" for outcome, n in counts.items())


def matrix_lines(outcomes: dict[tuple[str, str], list[str]]) -> list[str]:
    """The client x feature table as text lines, the columns every feature some test filled."""
    features = [f for f in FEATURES if any(f == feature for _, feature in outcomes)]
    texts = {(c, f): cell_text(outcomes.get((c, f), [])) for c in CLIENTS for f in features}
    width = max(len(c) for c in CLIENTS)
    cols = [max(len(f), *(len(texts[c, f]) for c in CLIENTS)) for f in features]
    lines = [" ".join([f"{'client':<{width}}", *(f"{f:<{w}}" for f, w in zip(features, cols, strict=True))])]
    for name in CLIENTS:
        cells = (f"{texts[name, f]:<{w}}" for f, w in zip(features, cols, strict=True))
        lines.append(" ".join([f"{name:<{width}}", *cells]).rstrip())
    return lines


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    outcomes = config.stash.get(_OUTCOMES, {})
    if not outcomes:
        return
    terminalreporter.section("real clients: client x feature")
    for line in matrix_lines(outcomes):
        terminalreporter.write_line(line)
