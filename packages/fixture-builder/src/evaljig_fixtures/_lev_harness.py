"""The LEV harness's objects: an extracted dataset package, the runs a test started, and their debug files.

A contract test against the real lighteval needs three things besides lighteval: a provider
spec pointed at a local gateway, a dataset package on disk with the gateway's answer key, and a
record of every run it started, so that a failure can be debugged from CI artifacts alone.
``evaljig_fixtures._lev_plugin`` turns these into pytest fixtures; they are plain objects so a
team can use them outside pytest too.
"""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import subprocess
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaljig_config import (
    LightEvalConfigRenderer,
    LightEvalRun,
    ProviderSpec,
    RetryBudgetExhausted,
    run_cli,
    run_python,
    scrub_text,
)
from evaljig_fixtures._dataset_load import DatasetPackage, load_dataset_package
from evaljig_fixtures._regen_run import text_diff
from evaljig_gateway import Call, CassetteMiss, Gateway, first_miss

LEV_FAKE_KEY = "sk-evaljig-fake-0000"
"""The placeholder api key the harness puts in the spec's variable: the gateway ignores keys, and a
test can prove no file of a run holds it (``leaked_files``)."""
TAIL_LINES = 200
TAIL_CHARS = 64 * 1024
JOURNAL_CALLS = 500


@dataclass(frozen=True)
class LevDataset:
    """A verified dataset package extracted to a folder: what a run and the gateway need of it."""

    name: str
    task: str
    """lighteval's task spec, e.g. ``mini_mmlu|0``."""
    module: Path
    """The custom task module (``--custom-tasks``); its folder is the task's local ``hf_repo``."""
    rows: int
    answer_key: Mapping[str, str]
    package: DatasetPackage

    @classmethod
    def extract(cls, zip_path: Path, folder: Path) -> LevDataset:
        """Load and verify ``zip_path`` (``DatasetPackageError`` names what is wrong), extract it into ``folder``."""
        package = load_dataset_package(zip_path)
        module = package.extract_to(folder)
        return cls(package.name, package.task_spec, module, len(package.rows), dict(package.answer_key), package)


@dataclass
class LevInvocation:
    """One run a LEV test started, as far as a failure report needs it."""

    label: str
    argv: list[str]
    run_dir: Path | None = None
    spec: ProviderSpec | None = None
    stdout: str | None = None
    stderr: str | None = None
    calls: list[Call] = field(default_factory=list)
    """The gateway calls made while this run went on (empty without a gateway)."""
    run: LightEvalRun | None = None


@dataclass
class LevTrace:
    """Starts the runs of one LEV test and remembers them: ``trace.cli(...)`` is ``run_cli(...)``.

    With a ``gateway`` each invocation also keeps the calls it made (``trace.invocations[i].calls``,
    ``trace.last_calls``); the journal is not reset between runs.
    """

    gateway: Gateway | None = None
    invocations: list[LevInvocation] = field(default_factory=list)

    @property
    def last_calls(self) -> list[Call]:
        """The gateway calls of the last run started (empty before any)."""
        return self.invocations[-1].calls if self.invocations else []

    def cli(self, spec: ProviderSpec, tasks: str, *, custom_tasks: Path, run_dir: Path, **kw: Any) -> LightEvalRun:
        """``run_cli`` (lighteval's CLI, a subprocess), recorded."""
        argv = LightEvalConfigRenderer(spec).cli_argv(
            run_dir.resolve() / "config.yaml", tasks, custom_tasks=custom_tasks.resolve(),
            output_dir=run_dir.resolve() / "out", max_samples=kw.get("max_samples"),
        )  # fmt: skip
        invocation = LevInvocation("cli", argv, run_dir, spec)
        return self._record(invocation, lambda: run_cli(spec, tasks, custom_tasks=custom_tasks, run_dir=run_dir, **kw))

    def python(self, spec: ProviderSpec, tasks: str, *, custom_tasks: Path, run_dir: Path, **kw: Any) -> LightEvalRun:
        """``run_python`` (lighteval's ``Pipeline`` in this process), recorded."""
        argv = ["run_python", tasks, f"custom_tasks={custom_tasks}", f"run_dir={run_dir}"]
        argv.append(f"max_samples={kw.get('max_samples')}")
        invocation = LevInvocation("python", argv, run_dir, spec)
        return self._record(
            invocation, lambda: run_python(spec, tasks, custom_tasks=custom_tasks, run_dir=run_dir, **kw)
        )

    def in_process(self, label: str, main: Callable[[list[str]], int], argv: list[str]) -> tuple[int, str, str]:
        """Run a CLI's ``main(argv)`` in this process (lighteval is imported once per worker, not per run)."""
        out, err = io.StringIO(), io.StringIO()
        invocation = LevInvocation(label, argv)
        self.invocations.append(invocation)
        before = self._journal_size()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        invocation.stdout, invocation.stderr = out.getvalue(), err.getvalue()
        invocation.calls = self._calls_since(before)
        return code, out.getvalue(), err.getvalue()

    def subprocess(self, argv: list[str], *, cwd: Path) -> subprocess.CompletedProcess[str]:
        """Any command (e.g. your own pipeline's CLI), its output kept for the failure report."""
        invocation = LevInvocation("subprocess", argv)
        self.invocations.append(invocation)
        before = self._journal_size()
        done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=cwd)
        invocation.stdout, invocation.stderr = done.stdout, done.stderr
        invocation.calls = self._calls_since(before)
        return done

    def _record(self, invocation: LevInvocation, start: Callable[[], LightEvalRun]) -> LightEvalRun:
        """Run ``start``; a run that failed after a cassette miss raises :class:`CassetteMiss` from its error.

        lighteval answers a 404 with an empty answer, so the runner's error is a retry budget with
        ``last error: None``: the gateway's explanation (request, closest recording, differing fields)
        is the one line that says what happened, and it comes first. A spent retry budget otherwise
        gets the error codes the gateway answered (lighteval retries a 400 such as
        ``context_length_exceeded`` without logging it, so the runner alone cannot name it).
        """
        self.invocations.append(invocation)  # before the run: a run that raises is reported too
        before = self._journal_size()
        try:
            invocation.run = start()
        except Exception as exc:
            invocation.calls = self._calls_since(before)
            found = first_miss(invocation.calls)
            if isinstance(exc, RetryBudgetExhausted) and found is None:
                answered = answered_errors(invocation.calls)
                if answered:
                    raise RetryBudgetExhausted(
                        exc.model, exc.attempts, f"{exc.last_error}; the gateway answered {answered}"
                    ) from exc
            if found is None or isinstance(exc, CassetteMiss):
                raise
            tape = self.gateway.tape if self.gateway is not None else None
            cassette = str(tape.path) if tape is not None else None
            raise CassetteMiss(found[0], misses=found[1], cassette=cassette) from exc
        invocation.calls = self._calls_since(before)
        return invocation.run

    def _journal_size(self) -> int:
        return len(self.gateway.calls()) if self.gateway is not None else 0

    def _calls_since(self, before: int) -> list[Call]:
        if self.gateway is None:
            return []
        calls = self.gateway.calls()
        return calls[before:] if len(calls) >= before else calls  # a reset in between: all of it is this run's


def answered_errors(calls: Iterable[Call]) -> str:
    """The error answers among ``calls`` that carried an OpenAI code, counted: ``63 x 400 context_length_exceeded``."""
    counts = Counter((c.status, c.error_code) for c in calls if c.status >= 400 and c.error_code)
    return ", ".join(
        f"{n} x {status} {code}" for (status, code), n in sorted(counts.items(), key=lambda i: (-i[1], i[0]))
    )


def _tail(text: str) -> str:
    return "\n".join(text.splitlines()[-TAIL_LINES:])[-TAIL_CHARS:] + "\n"


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None


def debug_files(
    trace: LevTrace | None, gateway: Gateway | None, sections: Iterable[tuple[str, str]] = ()
) -> dict[str, str]:
    """File name -> text of everything a failed LEV test leaves for its reader (not yet scrubbed).

    ``argv.txt``; per run ``run<N>-<label>-config.yaml`` and stdout/stderr tails; the test's captured
    output (``sections``, pytest's report sections) and the last gateway calls as JSON lines.
    """
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
    captured = [(name, text) for name, text in sections if text.strip()]
    if captured:
        files["pytest-captured-tail.txt"] = "".join(f"----- {name} -----\n{_tail(text)}" for name, text in captured)
    if gateway is not None:
        calls = gateway.calls()[-JOURNAL_CALLS:]
        files["gateway-journal.jsonl"] = "".join(json.dumps(c.as_dict(), sort_keys=True) + "\n" for c in calls)
    return files


def scrub(text: str, secrets: Iterable[str]) -> str:
    """Every spelling of every secret (raw, JSON-escaped, URL-encoded) masked, as the runners do."""
    for secret in sorted(set(secrets) - {""}, key=lambda s: (-len(s), s)):
        text = scrub_text(text, secret)
    return text


def assert_golden_file(actual: str, path: Path, *, rebuild: str) -> None:
    """Pass when ``actual`` is the text of the golden file at ``path``; else fail saying what changed and the fix.

    A golden (the CLI's results table, say) is written by a builder and compared by a test: when they
    differ, the failure shows the difference (``-`` committed, ``+`` this run) and ``rebuild``, the
    command that rewrites the file, to run once the change is expected (review the diff, then commit).
    """
    if not path.is_file():
        raise AssertionError(f"{path} is missing: build it with `{rebuild}`, review it and commit it")
    committed = path.read_text(encoding="utf-8")
    if actual == committed:
        return
    diff = "\n".join(f"  {line}" for line in text_diff(committed, actual, f"committed/{path.name}", "this run"))
    raise AssertionError(
        f"{path} differs from this run (- committed, + this run):\n{diff}\n"
        f"If the change is expected (lighteval, the model, the prompt or the data changed), rebuild it with "
        f"`{rebuild}`, review the diff and commit it."
    )


def leaked_files(folder: Path, secret: str = LEV_FAKE_KEY) -> list[Path]:
    """Files under ``folder`` that hold ``secret`` as raw bytes (``assert not leaked_files(run.run_dir)``)."""
    needle = secret.encode("utf-8")
    return sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink() and needle in p.read_bytes())
