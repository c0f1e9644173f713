"""Run lighteval through its CLI (subprocess) or its Python ``Pipeline`` — isolated and offline.

Every run gets a fresh working directory holding lighteval's sample cache (``cache_dir``),
litellm's disk cache (``.litellm_cache``), ``HF_HOME`` and the output folder: both caches
silently serve stale (even empty) answers when shared. lighteval never fails on API errors;
the runners read its own log lines and raise :class:`RetryBudgetExhausted` (``check=True``)
when any request ended empty after the retry budget, and its details and raise
:class:`EmptyAnswers` when answers came back empty with a 200 (lighteval scores both 0).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeVar

from evaljig_config._config_renderer import LightEvalConfigRenderer
from evaljig_config._errors import ConfigError, EmptyAnswers, RetryBudgetExhausted
from evaljig_config._lighteval_import import import_lighteval_module
from evaljig_config._lighteval_setup import lighteval_run_env as run_env
from evaljig_config._lighteval_setup import prepare_lighteval, prepare_run_dir
from evaljig_config._process_group import run_in_group, signals_deferred
from evaljig_config._run_details import read_answer_counts
from evaljig_config._run_result import (
    LightEvalRun,
    api_messages,
    budget_summary,
    read_scores,
    results_table,
    written_files,
)
from evaljig_config._scrub import MIN_SECRET_LENGTH, scrub_secret, scrub_text
from evaljig_config._spec import ProviderSpec

LITELLM_LOGGER = "lighteval.models.endpoints.litellm_model"
#: lighteval 0.13 retries a ``BadRequestError`` (any 400: ``context_length_exceeded``, a content filter) without
#: logging it; only the Python path sees the error itself (litellm's, kept by ``_litellm_errors_kept``).
UNLOGGED = (
    "None (lighteval logs no error for a 400 it retries, e.g. context_length_exceeded; "
    "the Python path (--path python) names it)"
)
CLI_TIMEOUT_S = 900
_T = TypeVar("_T")


def lighteval_executable() -> str:
    """``lighteval`` next to this interpreter (the nox venv), else on PATH."""
    beside = Path(sys.executable).with_name("lighteval")
    found = str(beside) if beside.exists() else shutil.which("lighteval")
    if not found:
        import_lighteval_module("lighteval")  # raises LightEvalUnavailable with the install hint
        raise ConfigError("lighteval is importable but its 'lighteval' command was not found")
    return found


def _result(
    path: Literal["cli", "python"],
    run_dir: Path,
    *,
    stdout: str,
    log: str,
    returncode: int | None,
    raised: list[str] | None = None,
) -> LightEvalRun:
    """What lighteval wrote and logged, read the same way for both paths.

    ``raised`` (the Python path): the errors litellm raised, for when lighteval logged none (it
    retries a ``BadRequestError`` — a 400 such as ``context_length_exceeded`` — without a word).
    """
    messages = api_messages(log)
    empty, attempts, last_error = budget_summary(messages)
    if last_error is None and raised:
        last_error = raised[-1]
    counts = read_answer_counts(run_dir / "out")
    return LightEvalRun(
        path=path,
        run_dir=run_dir,
        scores=read_scores(run_dir / "out"),
        stdout_table=results_table(stdout),
        files=written_files(run_dir),
        empty_requests=empty,
        attempts_per_request=attempts,
        last_error=last_error,
        returncode=returncode,
        messages=messages,
        answers=None if counts is None else counts.answers,
        empty_answers=None if counts is None else counts.empty,
        reasoning_only=None if counts is None else counts.reasoning_only,
    )


def _finish(run: LightEvalRun, model: str, check: bool) -> LightEvalRun:
    if check and run.empty_requests:
        raise RetryBudgetExhausted(
            model=model,
            attempts=run.attempts_per_request or 0,
            last_error=f"{run.empty_requests} request(s) ended empty; last error: {run.last_error or UNLOGGED}",
        )
    if check and run.empty_after_success:
        raise EmptyAnswers(model, run.empty_after_success, run.answers or 0, run.reasoning_only or 0)
    return run


def check_run_inputs(tasks: str, custom_tasks: Path, max_samples: int | None) -> Path:
    """Refuse bad arguments before the run directory is touched, so a retry can reuse it.

    Returns ``custom_tasks`` made absolute now, before a runner changes directory.
    """
    if not tasks.strip():
        raise ConfigError("tasks: must name at least one task, e.g. 'mytask|0'")
    if not custom_tasks.is_file():
        raise ConfigError(f"{custom_tasks}: custom tasks module not found (--custom-tasks)")
    if max_samples is not None and max_samples < 1:
        raise ConfigError(f"max_samples: must be at least 1, got {max_samples}")
    return custom_tasks.resolve()


def _api_key(spec: ProviderSpec) -> str:
    """The key, refused before the run if it is too short to be scrubbed reliably afterwards."""
    key = spec.api_key()
    if len(key) < MIN_SECRET_LENGTH:
        raise ConfigError(
            f"provider '{spec.name}': the key in {spec.api_key_env} is shorter than {MIN_SECRET_LENGTH} characters; "
            "it could not be scrubbed from lighteval's files"
        )
    return key


class _Prepared(NamedTuple):
    """What both runners settle before lighteval starts."""

    custom_tasks: Path
    """Made absolute, before a runner changes directory."""
    api_key: str
    run_dir: Path
    """Fresh and empty."""


def _prepare(
    spec: ProviderSpec,
    tasks: str,
    custom_tasks: Path,
    run_dir: Path,
    max_samples: int | None,
    find_lighteval: Callable[[], _T],
) -> tuple[_Prepared, _T]:
    """Both runners' preamble, in one order: arguments, key, lighteval (``find_lighteval``), then the run directory.

    Everything that can be refused is refused before ``run_dir`` is touched, so a retry can reuse it.
    """
    custom_tasks = check_run_inputs(tasks, custom_tasks, max_samples)
    api_key = _api_key(spec)
    found = find_lighteval()  # says how to get it, before anything is written
    prepare_lighteval()  # its offline placeholder, where lighteval is installed beside us
    return _Prepared(custom_tasks, api_key, prepare_run_dir(run_dir)), found


@contextlib.contextmanager
def _scrubbed_afterwards(run_dir: Path, api_key: str) -> Iterator[None]:
    """Mask the key in everything under ``run_dir`` on every way out: return, exception, Ctrl-C, SIGTERM."""
    try:
        yield
    finally:
        with signals_deferred():
            scrub_secret(run_dir, api_key)


def _read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def run_cli(
    spec: ProviderSpec,
    tasks: str,
    *,
    custom_tasks: Path,
    run_dir: Path,
    max_samples: int | None = None,
    check: bool = True,
) -> LightEvalRun:
    """``lighteval endpoint litellm`` as a subprocess in a fresh ``run_dir``.

    The child leads its own process group, stopped with everything in it on any way out.
    """
    (custom_tasks, api_key, run_dir), executable = _prepare(
        spec, tasks, custom_tasks, run_dir, max_samples, lighteval_executable
    )
    service = LightEvalConfigRenderer(spec)
    config = service.write_config(run_dir / "config.yaml")
    argv = service.cli_argv(
        config, tasks, custom_tasks=custom_tasks, output_dir=run_dir / "out", max_samples=max_samples
    )
    argv[0] = executable
    env = run_env(run_dir, api_key)
    with _scrubbed_afterwards(run_dir, api_key):
        returncode = run_in_group(argv, cwd=run_dir, env=env, timeout_s=CLI_TIMEOUT_S)
    stdout, stderr = _read_text(run_dir / "stdout.txt"), _read_text(run_dir / "stderr.txt")
    if returncode != 0:
        tail = scrub_text("\n".join(stderr.strip().splitlines()[-15:]), api_key)
        raise ConfigError(f"lighteval exited with {returncode} (see {run_dir}/stderr.txt):\n{tail}")
    run = _result("cli", run_dir, stdout=stdout, log=stderr, returncode=returncode)
    return _finish(run, spec.model, check)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextlib.contextmanager
def _inside(run_dir: Path, env: Mapping[str, str]) -> Iterator[None]:
    """cwd and environment of the run, restored afterwards."""
    saved_cwd, saved_env = Path.cwd(), dict(os.environ)
    os.chdir(run_dir)
    os.environ.update(env)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def run_python(
    spec: ProviderSpec,
    tasks: str,
    *,
    custom_tasks: Path,
    run_dir: Path,
    max_samples: int | None = None,
    check: bool = True,
) -> LightEvalRun:
    """lighteval's ``Pipeline`` in this process, in a fresh ``run_dir`` (not thread-safe: it changes cwd)."""
    (custom_tasks, api_key, run_dir), _ = _prepare(
        spec, tasks, custom_tasks, run_dir, max_samples, lambda: import_lighteval_module("lighteval")
    )
    with _scrubbed_afterwards(run_dir, api_key):
        stdout, log, raised = _evaluate(spec, tasks, custom_tasks, run_dir, max_samples, api_key)
    run = _result(
        "python", run_dir, stdout=scrub_text(stdout, api_key), log=scrub_text(log, api_key), returncode=None,
        raised=[scrub_text(error, api_key) for error in raised],
    )  # fmt: skip
    return _finish(run, spec.model, check)


def _evaluate(
    spec: ProviderSpec, tasks: str, custom_tasks: Path, run_dir: Path, max_samples: int | None, api_key: str
) -> tuple[str, str, list[str]]:
    """Build and run lighteval's ``Pipeline`` inside ``run_dir``; (printed results, API log lines, litellm's errors)."""
    service = LightEvalConfigRenderer(spec)
    service.write_config(run_dir / "config.yaml")  # the same file the CLI reads, for the record
    collect = _Collect()
    stdout = io.StringIO()
    env = {k: v for k, v in run_env(run_dir, api_key, base={}).items() if k != "OPENAI_API_KEY"}
    raised: list[str] = []
    with _inside(run_dir, env), _litellm_cache_in(run_dir), _litellm_errors_kept(raised):
        tracker_mod = import_lighteval_module("lighteval.logging.evaluation_tracker")
        pipeline_mod = import_lighteval_module("lighteval.pipeline")
        logger = logging.getLogger(LITELLM_LOGGER)
        logger.addHandler(collect)
        try:
            pipeline = pipeline_mod.Pipeline(
                tasks=tasks,
                pipeline_parameters=pipeline_mod.PipelineParameters(
                    launcher_type=pipeline_mod.ParallelismManager.NONE,
                    custom_tasks_directory=str(custom_tasks),
                    max_samples=max_samples,
                ),
                evaluation_tracker=tracker_mod.EvaluationTracker(output_dir=str(run_dir / "out"), save_details=True),
                model_config=service.litellm_model_config(api_key=api_key),
            )
            pipeline.evaluate()
            with contextlib.redirect_stdout(stdout):
                pipeline.show_results()
            pipeline.save_and_push_results()
        finally:
            logger.removeHandler(collect)
            (run_dir / "stdout.txt").write_text(stdout.getvalue(), encoding="utf-8")
    return stdout.getvalue(), "\n".join(collect.lines), raised


@contextlib.contextmanager
def _litellm_errors_kept(raised: list[str]) -> Iterator[None]:
    """Every error ``litellm.completion`` raises during the run, as ``Type: message``, in ``raised``.

    lighteval's loop swallows a ``BadRequestError`` without logging it and ends with an empty
    answer: this is the only place the reason (``ContextWindowExceededError`` ...) is still seen.
    lighteval calls ``litellm.completion`` through the module, so the wrapper sees each call.
    """
    import litellm

    original = litellm.completion

    def completion(*args: Any, **kwargs: Any) -> Any:
        try:
            return original(*args, **kwargs)
        except Exception as exc:
            raised.append(f"{type(exc).__name__}: {' '.join(str(exc).split())}")  # list.append: thread-safe
            raise

    litellm.completion = completion
    try:
        yield
    finally:
        litellm.completion = original


@contextlib.contextmanager
def _litellm_cache_in(run_dir: Path) -> Iterator[None]:
    """litellm's process-wide disk cache inside the run, and whatever was there before afterwards.

    lighteval points ``litellm.cache`` at ``./.litellm_cache`` once, when its litellm module is
    first imported, and every later litellm call in the process would read it: a stale (even
    empty) answer from an earlier run would come back silently.
    """
    import litellm
    from litellm.caching.caching import Cache, LiteLLMCacheType

    previous = litellm.cache
    import_lighteval_module("lighteval.models.endpoints.litellm_model")
    litellm.cache = Cache(type=LiteLLMCacheType.DISK, disk_cache_dir=str(run_dir / ".litellm_cache"))
    try:
        yield
    finally:
        litellm.cache = previous
