"""evaljig's own LEV matrix on the public harness (``evaljig_fixtures``' pytest plugin ``evaljig_lev``).

The plugin gives the provider, dataset, gateway and trace fixtures and the debug files a failed
case leaves; what is evaljig's own lives here: the committed fixtures under the repository's
``fixtures/`` and their goldens, its two datasets, and the rule that skips the matrix (saying how
to run it) where lighteval is not installed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaljig_config import LightEvalRun, lighteval_available
from evaljig_fixtures import LEV_FAKE_KEY, LevDataset, LevTrace, leaked_files, load_with_modules_together

ROOT = Path(__file__).resolve().parents[4]
FIXTURES = ROOT / "fixtures"
PROVIDER = FIXTURES / "providers" / "fake-openai.json"
EXPECTED_CONFIG = FIXTURES / "configs" / "expected-config.yaml"
EXPECTED_STDOUT = FIXTURES / "configs" / "expected-cli-stdout.txt"
#: What rebuilds ``EXPECTED_STDOUT``: LEV-001 checks it with its own lighteval run (LEV-004 leaves it out).
REBUILD_STDOUT = "nox -s regen -- --only cli-stdout-golden"
SDK_CALLS_PER_ATTEMPT = 3  # 1 + the OpenAI SDK's 2 retries inside litellm (see test_lev_api.py)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist load`` (``nox -s lighteval``), but ``test_lev_api.py``'s cases share one worker.

    Each of them imports lighteval's pipeline into the worker (its Python API; LEV-004's regen in
    process), about 13 s of CPU, paid once per worker that gets one: spread by plain ``load``, both
    workers paid it (measured: 12 s of CPU less per run, the same wall time).
    """
    return load_with_modules_together(config, log, ["test_lev_api.py"])


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


@contextlib.contextmanager
def lighteval_cli_unmeasured() -> Iterator[None]:
    """Within it, the lighteval CLI processes started here (by ``run_cli``, regen's builders) run without coverage.

    ``nox -s lighteval`` measures coverage in every Python subprocess (coverage's ``patch =
    subprocess`` hands them ``COVERAGE_PROCESS_CONFIG``). A ``lighteval`` CLI process runs none of
    evaljig's code, yet coverage's tracer sees every call of its ~13 s import: it cost each one
    about 4.5 s more CPU (+35 %, measured importing lighteval's endpoint pipeline with and without
    it). The CLI runs exactly as before. Code of evaljig's own that this process runs, and regen's
    forked builder process (coverage's fork patch), are still measured; a subprocess of evaljig's
    own started meanwhile (``evaljig-config``) would not be: start those outside it.
    """
    saved = os.environ.pop("COVERAGE_PROCESS_CONFIG", None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ["COVERAGE_PROCESS_CONFIG"] = saved


@pytest.fixture
def lev_trace(lev_trace: LevTrace, monkeypatch: pytest.MonkeyPatch) -> LevTrace:
    """The plugin's ``lev_trace``, its lighteval CLI processes unmeasured (:func:`lighteval_cli_unmeasured`)."""
    measured_cli = lev_trace.cli

    def cli(*args: Any, **kwargs: Any) -> LightEvalRun:
        with lighteval_cli_unmeasured():
            return measured_cli(*args, **kwargs)

    monkeypatch.setattr(lev_trace, "cli", cli)
    return lev_trace


@pytest.fixture
def lev_provider_path() -> Path:
    """The committed provider fixture (the plugin points it at this worker's gateway)."""
    return PROVIDER


@pytest.fixture
def mini_mmlu(lev_datasets: object) -> LevDataset:
    return lev_datasets(FIXTURES / "datasets" / "mini-mmlu.eval752.zip")  # type: ignore[operator,no-any-return]


@pytest.fixture
def polyglot(lev_datasets: object) -> LevDataset:
    return lev_datasets(FIXTURES / "datasets" / "polyglot.eval752.zip")  # type: ignore[operator,no-any-return]


def assert_no_secret(folder: Path) -> None:
    leaked = leaked_files(folder, LEV_FAKE_KEY)
    assert not leaked, f"the api key was left in {leaked}"
