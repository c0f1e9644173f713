"""The runs a LEV test starts, remembered so a failure can be debugged from CI artifacts alone.

``LevTrace`` starts each run (``trace.cli(...)`` is ``run_cli(...)``) and records it;
``debug_files`` turns the record, the test's captured output and the gateway journal into the
files a failed test attaches to its case report (the conftest scrubs the key from them).
"""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from evaljig_config import LightEvalConfigRenderer, LightEvalRun, ProviderSpec, run_cli, run_python
from evaljig_config._scrub import scrub_text
from evaljig_gateway import Gateway

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
