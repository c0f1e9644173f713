"""Shared set-up of the LEV matrix: the committed fixtures, a gateway with the answer key, a summary.

Every run a LEV test starts goes through the ``trace`` fixture; when the test fails, what is
needed to debug it from CI artifacts alone is attached to its case report (see
``pytest_runtest_makereport``): the rendered config, the argv, stdout/stderr tails of each
run, the test's captured output and the gateway journal — with the api key scrubbed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator
from typing import Any

import pytest

from evaljig_config import ProviderSpec, lighteval_available, load_provider_spec
from evaljig_gateway import Gateway
from evaljig_report import ATTACHMENT_KEY

from .lev_inputs import FAKE_KEY, FAKE_KEY_ENV, FIXTURES, Dataset, extract_dataset
from .lev_trace import LevTrace, debug_files, scrub


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip the matrix, saying how to run it, in a venv without lighteval (a bare ``pytest``).

    ``nox -s lighteval`` sets ``EVALJIG_REQUIRE_LIGHTEVAL=1``: there a missing lighteval fails.
    """
    if lighteval_available() or os.environ.get("EVALJIG_REQUIRE_LIGHTEVAL") == "1":
        return
    skip = pytest.mark.skip(reason="lighteval is not installed here: run `make lighteval`")
    for item in items:
        if item.get_closest_marker("lighteval"):  # not item.keywords: this folder's name is one too
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_KEY)


@pytest.fixture
def provider(gateway: Gateway) -> ProviderSpec:
    """The committed provider fixture, pointed at this worker's gateway."""
    return load_provider_spec(FIXTURES / "providers" / "fake-openai.json").with_base_url(gateway.base_url)


@pytest.fixture(scope="session")
def mini_mmlu(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return extract_dataset(tmp_path_factory, "mini-mmlu", "mini_mmlu")


@pytest.fixture(scope="session")
def polyglot(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return extract_dataset(tmp_path_factory, "polyglot", "polyglot")


@pytest.fixture
def lev(request: pytest.FixtureRequest) -> Any:
    """``lev("LEV-001", calls=40, ...)`` adds a row to the matrix summary printed at the end."""

    def record(lev_id: str, **facts: object) -> None:
        request.node.user_properties.append(("lev", json.dumps({"id": lev_id, **facts}, sort_keys=True)))

    return record


_TRACE = pytest.StashKey[LevTrace]()


@pytest.fixture
def trace(request: pytest.FixtureRequest) -> LevTrace:
    return request.node.stash.setdefault(_TRACE, LevTrace())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed LEV test attaches its debug files to its case report (``evaljig.attachment``)."""
    report = yield
    if report.when == "call" and report.failed:
        funcargs = getattr(item, "funcargs", {})
        gateway = funcargs.get("gateway") if isinstance(funcargs.get("gateway"), Gateway) else None
        secrets = {FAKE_KEY, os.environ.get(FAKE_KEY_ENV, FAKE_KEY)} - {""}
        for name, text in debug_files(item.stash.get(_TRACE, None), gateway, report).items():
            mime = (
                "application/x-ndjson"
                if name.endswith(".jsonl")
                else "text/yaml"
                if name.endswith(".yaml")
                else "text/plain"
            )
            item.user_properties.append(
                (ATTACHMENT_KEY, {"name": name, "mime_type": mime, "text": scrub(text, secrets)})
            )
    return report


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
