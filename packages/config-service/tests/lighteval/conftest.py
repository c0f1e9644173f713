"""Shared set-up of the LEV matrix: the committed fixtures, a gateway with the answer key, a summary.

Every run a LEV test starts goes through the ``trace`` fixture; when the test fails, what is
needed to debug it from CI artifacts alone is attached to its case report (see
``pytest_runtest_makereport``): the rendered config, the argv, stdout/stderr tails of each
run, the test's captured output and the gateway journal — with the api key scrubbed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import subprocess
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from evaljig_config import (
    LightEvalConfigRenderer,
    LightEvalRun,
    ProviderSpec,
    lighteval_available,
    load_provider_spec,
    run_cli,
    run_python,
)
from evaljig_config._scrub import scrub_text
from evaljig_gateway import Gateway
from evaljig_report import ATTACHMENT_KEY

ROOT = Path(__file__).resolve().parents[4]
FIXTURES = ROOT / "fixtures"
EXPECTED_CONFIG = FIXTURES / "configs" / "expected-config.yaml"
EXPECTED_STDOUT = FIXTURES / "configs" / "expected-cli-stdout.txt"
SDK_CALLS_PER_ATTEMPT = 3  # 1 + the OpenAI SDK's 2 retries inside litellm (see test_lev_api.py)
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
        if item.get_closest_marker("lighteval"):  # not item.keywords: this folder's name is one too
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


TAIL_LINES = 200
TAIL_CHARS = 64 * 1024
JOURNAL_CALLS = 500


@dataclass
class Invocation:
    """One run a LEV test started, as far as a failure report needs it."""

    label: str
    argv: list[str]
    run_dir: Path | None = None
    spec: ProviderSpec | None = None
    stdout: str | None = None
    stderr: str | None = None


@dataclass
class LevTrace:
    """Starts the runs of one LEV test and remembers them (``trace.cli(...)`` is ``run_cli(...)``)."""

    invocations: list[Invocation] = field(default_factory=list)

    def cli(self, spec: ProviderSpec, tasks: str, *, custom_tasks: Path, run_dir: Path, **kw: Any) -> LightEvalRun:
        argv = LightEvalConfigRenderer(spec).cli_argv(
            run_dir.resolve() / "config.yaml", tasks, custom_tasks=custom_tasks.resolve(),
            output_dir=run_dir.resolve() / "out", max_samples=kw.get("max_samples"),
        )  # fmt: skip
        self.invocations.append(Invocation("cli", argv, run_dir, spec))
        return run_cli(spec, tasks, custom_tasks=custom_tasks, run_dir=run_dir, **kw)

    def python(self, spec: ProviderSpec, tasks: str, *, custom_tasks: Path, run_dir: Path, **kw: Any) -> LightEvalRun:
        argv = [
            "run_python",
            tasks,
            f"custom_tasks={custom_tasks}",
            f"run_dir={run_dir}",
            f"max_samples={kw.get('max_samples')}",
        ]
        self.invocations.append(Invocation("python", argv, run_dir, spec))
        return run_python(spec, tasks, custom_tasks=custom_tasks, run_dir=run_dir, **kw)

    def in_process(self, label: str, main: Callable[[list[str]], int], argv: list[str]) -> tuple[int, str, str]:
        """Run a CLI's ``main(argv)`` in this process (lighteval is imported once per worker, not per run)."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        self.invocations.append(Invocation(label, argv, stdout=out.getvalue(), stderr=err.getvalue()))
        return code, out.getvalue(), err.getvalue()

    def subprocess(self, argv: list[str], *, cwd: Path) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=cwd)
        self.invocations.append(Invocation("subprocess", argv, stdout=done.stdout, stderr=done.stderr))
        return done


_TRACE = pytest.StashKey[LevTrace]()


@pytest.fixture
def trace(request: pytest.FixtureRequest) -> LevTrace:
    return request.node.stash.setdefault(_TRACE, LevTrace())


def _tail(text: str) -> str:
    return "\n".join(text.splitlines()[-TAIL_LINES:])[-TAIL_CHARS:] + "\n"


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None


def debug_files(trace: LevTrace | None, gateway: Gateway | None, report: pytest.TestReport) -> dict[str, str]:
    """File name -> text of everything a failed LEV test leaves for its reader (not yet scrubbed)."""
    files: dict[str, str] = {}
    invocations = trace.invocations if trace is not None else []
    if invocations:
        files["argv.txt"] = "".join(f"#{n} {i.label}: {shlex.join(i.argv)}\n" for n, i in enumerate(invocations, 1))
    for n, inv in enumerate(invocations, 1):
        prefix = f"run{n}-{inv.label}"
        config = _read(inv.run_dir / "config.yaml") if inv.run_dir else None
        if config is None and inv.spec is not None:
            config = LightEvalConfigRenderer(inv.spec).render_yaml()  # the run stopped before writing it
        streams = {"stdout": inv.stdout, "stderr": inv.stderr}
        if inv.run_dir is not None:
            streams = {name: _read(inv.run_dir / f"{name}.txt") for name in streams}
        for name, text in [("config.yaml", config), *((f"{k}-tail.txt", v) for k, v in streams.items())]:
            if text is not None:
                files[f"{prefix}-{name}"] = text if name.endswith(".yaml") else _tail(text)
    captured = [(name, text) for name, text in report.sections if text.strip()]
    if captured:
        files["pytest-captured-tail.txt"] = "".join(f"----- {name} -----\n{_tail(text)}" for name, text in captured)
    if gateway is not None:
        calls = gateway.calls()[-JOURNAL_CALLS:]
        files["gateway-journal.jsonl"] = "".join(json.dumps(c.as_dict(), sort_keys=True) + "\n" for c in calls)
    return files


def scrub(text: str, secrets: set[str]) -> str:
    """Every spelling of every secret (raw, JSON-escaped, URL-encoded) masked, as the runners do."""
    for secret in secrets:
        text = scrub_text(text, secret)
    return text


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
