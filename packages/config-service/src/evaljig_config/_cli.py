"""``evaljig-config``: render lighteval configs and run lighteval with failures made visible.

    evaljig-config render SPEC [--base-url URL] [--model M] [-o config.yaml]
    evaljig-config lighteval run SPEC TASKS --custom-tasks FILE --run-dir DIR
                   [--path cli|python] [--base-url URL] [--model M] [--max-samples N]
    evaljig-config lighteval check

``lighteval run`` exits 1 when any request ended empty after the retry budget (lighteval
itself exits 0 and scores it 0), 2 on bad input, and 130/143 on SIGINT/SIGTERM (after
stopping lighteval's whole process group and scrubbing the key from the run directory).
``lighteval check`` imports every module a run reaches lazily, offline, and exits 1 with one
line per broken package (and the native library it cannot load) when the stack cannot run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType

from evaljig_common import one_line_errors
from evaljig_config._config_renderer import LightEvalConfigRenderer
from evaljig_config._errors import ConfigError, InfrastructureError, LightEvalUnavailable
from evaljig_config._process_group import GRACE_S
from evaljig_config._scrub import scrub_secret, scrub_text
from evaljig_config._spec import ProviderSpec, load_provider_spec


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evaljig-config", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    render = commands.add_parser("render", help="print (or write) the lighteval config.yaml for a provider spec")
    _spec_args(render)
    render.add_argument("-o", "--output", type=Path, help="write here (must end in .yaml) instead of stdout")
    lighteval = commands.add_parser("lighteval", help="run lighteval").add_subparsers(dest="action", required=True)
    run = lighteval.add_parser("run", help="run one evaluation in a fresh run directory")
    _spec_args(run)
    run.add_argument("tasks", help="lighteval task spec, e.g. 'mini_mmlu|0'")
    run.add_argument("--custom-tasks", type=Path, required=True, help="the custom task module")
    run.add_argument("--run-dir", type=Path, required=True, help="a new or empty directory for this run")
    run.add_argument("--path", choices=("cli", "python"), default="cli", help="lighteval CLI or Python API")
    run.add_argument("--max-samples", type=int, help="evaluate only the first N samples")
    lighteval.add_parser("check", help="import what a lighteval run needs, offline; one line per broken package")
    return parser


def _spec_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", type=Path, help="provider spec (.json, .yaml or .yml)")
    parser.add_argument("--base-url", help="override the spec's base_url (e.g. an ephemeral gateway)")
    parser.add_argument("--model", help="override the spec's model (keep the openai/ prefix)")


def _load(args: argparse.Namespace) -> ProviderSpec:
    spec = load_provider_spec(args.spec)
    if args.base_url:
        spec = spec.with_base_url(args.base_url)
    if args.model:
        spec = spec.with_model(args.model)
    return spec


class _Interrupted(BaseException):
    """SIGTERM (or SIGINT) during a run, raised in the main thread so every ``finally`` runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _stop_signals_raise(on_signal: Callable[[int], None] | None = None) -> Iterator[None]:
    """SIGINT/SIGTERM become ``_Interrupted`` (after ``on_signal``) while a run is under way (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if on_signal is not None:
            on_signal(signum)
        raise _Interrupted(signum)

    previous = {signum: signal.signal(signum, handler) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def _interrupted_line(signum: int, run_dir: Path | None) -> str:
    done = f"; lighteval stopped, key scrubbed in {run_dir}" if run_dir is not None else ""
    return f"evaljig-config: interrupted by {signal.Signals(signum).name}{done}"


def _exit_after_grace(run_dir: Path, shown: Path, api_key: str) -> Callable[[int], None]:
    """The Python path's last resort: lighteval's ``with ThreadPoolExecutor`` waits for every queued
    request before an exception gets out, so GRACE_S after the first signal a thread scrubs and exits."""
    started = threading.Event()

    def last_resort(signum: int) -> None:
        time.sleep(GRACE_S)
        scrub_secret(run_dir, api_key)
        print(_interrupted_line(signum, shown), file=sys.stderr, flush=True)
        os._exit(128 + signum)

    def on_signal(signum: int) -> None:
        if not started.is_set():
            started.set()
            threading.Thread(target=last_resort, args=(signum,), name="evaljig-exit", daemon=True).start()

    return on_signal


def _one_line(text: str) -> str:
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def _error(message: str) -> int:
    print(f"evaljig-config: {_one_line(message)}", file=sys.stderr)
    return 2


@one_line_errors("evaljig-config")
def main(argv: Sequence[str] | None = None) -> int:
    """The command line; every failure is one line on stderr (2: bad input, 1: the run failed).

    ``one_line_errors`` turns an ``OSError`` that gets out (stdout on a full disk) into one line.
    """
    args = _parser().parse_args(argv)
    if args.command == "lighteval" and args.action == "check":
        return _check()
    try:
        with _stop_signals_raise():
            spec = _load(args)
            if args.command == "render":
                return _render(spec, args.output)
            return _run(spec, args)
    except (_Interrupted, KeyboardInterrupt) as exc:
        signum = exc.signum if isinstance(exc, _Interrupted) else signal.SIGINT
        print(_interrupted_line(signum, args.run_dir if args.command == "lighteval" else None), file=sys.stderr)
        return 128 + signum
    except (ConfigError, LightEvalUnavailable, ValueError) as exc:
        return _error(str(exc))


def _check() -> int:
    """``lighteval check``: offline, with a throw-away ``HF_HOME``, import what a run needs."""
    import tempfile

    from evaljig_common import OFFLINE_ENV
    from evaljig_config._lighteval_import import INSTALL_HINT
    from evaljig_config._lighteval_setup import NOT_INSTALLED, STACK_MODULES, check_lighteval_stack
    from evaljig_config._stack_bounds import check_stack_versions

    mismatches = check_stack_versions()
    # lighteval turns on litellm's disk cache at import, in the working directory: the check runs
    # in a throw-away one, so it leaves no ./.litellm_cache behind
    here = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="evaljig-check-") as scratch:
        os.environ.update({**OFFLINE_ENV, "HF_HOME": str(Path(scratch) / "hf_home")})
        os.chdir(scratch)
        try:
            problems = check_lighteval_stack()
        except ConfigError as exc:
            return _error(str(exc))
        finally:
            os.chdir(here)
    lines = [m.line() for m in mismatches]
    lines += [p.line(after_mismatch=bool(mismatches)) for p in problems if p.package != f"lighteval{NOT_INSTALLED}"]
    if any(p.package == f"lighteval{NOT_INSTALLED}" for p in problems):  # one line says how to install it
        lines.append(_one_line(INSTALL_HINT))
    for line in lines:
        print(f"evaljig-config: lighteval stack check failed: {line}", file=sys.stderr)
    if lines:
        return 1
    return _print(f"lighteval stack ok: {len(STACK_MODULES)} modules a run reaches import offline\n")


def _warn_drift(service: LightEvalConfigRenderer) -> None:
    """lighteval's model-name rules that change the requests this config asks for, one line each on stderr."""
    for found in service.drift():
        print(f"evaljig-config: warning: {found.message}", file=sys.stderr)


def _render(spec: ProviderSpec, output: Path | None) -> int:
    service = LightEvalConfigRenderer(spec)
    _warn_drift(service)
    if output is None:
        return _print(service.render_yaml())
    try:
        service.write_config(output)
    except OSError as exc:  # a folder, under a file, read-only, full
        return _error(f"{output}: cannot write: {exc.strerror or exc}")
    return _print(f"wrote {output}\n")


def _print(text: str) -> int:
    """Write to stdout; a full or closed stdout fails in ``main``'s ``one_line_errors``."""
    sys.stdout.write(text)
    return 0


def _run(spec: ProviderSpec, args: argparse.Namespace) -> int:
    from evaljig_config._lighteval_runs import run_cli, run_python

    runner = run_cli if args.path == "cli" else run_python
    _warn_drift(LightEvalConfigRenderer(spec))
    last_resort = (
        _exit_after_grace(args.run_dir.resolve(), args.run_dir, spec.api_key()) if runner is run_python else None
    )
    try:
        with _stop_signals_raise(last_resort):
            run = runner(
                spec, args.tasks, custom_tasks=args.custom_tasks, run_dir=args.run_dir, max_samples=args.max_samples
            )
    except InfrastructureError as exc:  # a spent retry budget, or answers that came back empty
        print(f"evaljig-config: FAILED: {exc}", file=sys.stderr)
        print(
            f"evaljig-config: lighteval exited 0 and scored these requests 0; run files: {args.run_dir}",
            file=sys.stderr,
        )
        return 1
    except (ConfigError, LightEvalUnavailable):
        raise
    except OSError as exc:
        return _error(f"{exc.filename or args.run_dir}: {exc.strerror or exc}")
    except Exception as exc:  # lighteval itself failed; its message may quote the key
        print(f"evaljig-config: lighteval failed: {type(exc).__name__}: {_scrubbed(exc, spec)}", file=sys.stderr)
        return 1
    summary = f"lighteval ({run.path}) ok: {len(run.files)} file(s) in {run.run_dir}, no request ended empty"
    return _print(f"{run.stdout_table}\n{summary}\n")


def _scrubbed(exc: Exception, spec: ProviderSpec) -> str:
    return scrub_text(_one_line(str(exc)), spec.api_key())


def entry() -> int:
    """The console script: after an interrupt, exit at once; lighteval's worker threads may still be queued."""
    code = main()
    if code > 128:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    raise SystemExit(entry())
