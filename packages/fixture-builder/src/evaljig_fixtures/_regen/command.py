"""The ``regen`` subcommand (``evaljig-fixtures regen``) and ``regen_main`` for a team's own build script.

The default output is ``./fixtures`` (or the project's ``[tool.evaljig] fixtures``): regen runs
from the project's root, where its ``pyproject.toml`` is; library code never guesses where a
checkout is. Which builders run is decided by ``_regen.project`` (the project's own; none: a refusal).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from evaljig_common import OFFLINE_ENV, one_line_errors
from evaljig_config import lighteval_available
from evaljig_fixtures._errors import BuildError
from evaljig_fixtures._regen.builder import Builder
from evaljig_fixtures._regen.context import Upstream
from evaljig_fixtures._regen.isolate import DEFAULT_TIMEOUT_S
from evaljig_fixtures._regen.project import not_here, project_builders
from evaljig_fixtures._regen.rebuild import EXIT_FAILED, RegenOptions, run_regen
from evaljig_fixtures._regen.selection import registry_problems, select

EXIT_USAGE = 2
#: 128 + SIGTERM, as a shell reports a process SIGTERM ended.
EXIT_TERMINATED = 143


def configure_regen(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="the fixtures folder (default: ./fixtures; run from the repo root)"
    )
    parser.add_argument(
        "--check", action="store_true", help="rebuild into a temporary folder and fail (exit 1) on any byte of drift"
    )
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these builders")
    parser.add_argument(
        "--no-lighteval",
        action="store_true",
        help="skip the builders that run the real lighteval (they are skipped anyway where it is not installed)",
    )
    parser.add_argument("--list", action="store_true", help="list the builders, their outputs and requirements")
    parser.add_argument(
        "--upstream",
        metavar="URL",
        help="record cassettes from this OpenAI-compatible base URL (with /v1) instead of an ephemeral gateway",
    )
    parser.add_argument(
        "--match-ignore",
        action="append",
        metavar="FIELD",
        help="a request field the replay leaves out of the match (repeatable; replaces the default set, as "
        "for `evaljig-gateway serve --match-ignore`): no recording is reported stale for it",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"stop a builder (and every process it started) running longer than this (default: {DEFAULT_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="with --upstream: the environment variable holding its key (sent upstream, never written)",
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: must be a positive number of seconds")
    return value


def run_regen_command(args: argparse.Namespace) -> int:
    """``evaljig-fixtures regen``: the project's builders (pyproject / entry points); without them it refuses,
    naming the repository's build script (evaljig's own fixtures are built by one, like a team's)."""
    try:
        found = project_builders(Path.cwd())
    except BuildError as exc:
        print(f"evaljig-fixtures regen: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if found is None:
        print(f"evaljig-fixtures regen: {not_here(Path.cwd())}", file=sys.stderr)
        return EXIT_USAGE
    return regen_with(found.builders, args, found.fixtures or Path.cwd() / "fixtures")


def regen_with(
    builders: Sequence[Builder], args: argparse.Namespace, default_out: Path, command: str = "evaljig-fixtures regen"
) -> int:
    problems = registry_problems(builders)
    if problems:
        print("\n".join(f"evaljig-fixtures regen: {p}" for p in problems), file=sys.stderr)
        return EXIT_FAILED
    if args.list:
        for builder in builders:
            needs = f"  (requires {', '.join(sorted(builder.requires))})" if builder.requires else ""
            print(f"{builder.name:<12} {', '.join(builder.outputs)}{needs}  {builder.description}")
        return 0
    try:
        selected = select(builders, args.only)
    except ValueError as exc:
        print(f"evaljig-fixtures regen: --only: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.api_key_env and not args.upstream:
        print("evaljig-fixtures regen: --api-key-env needs --upstream", file=sys.stderr)
        return EXIT_USAGE
    upstream = Upstream(args.upstream, args.api_key_env) if args.upstream else None
    for name, value in OFFLINE_ENV.items():  # builders must never reach for the network (litellm's cost map, hubs)
        os.environ.setdefault(name, value)
    options = RegenOptions(
        out_dir=args.out if args.out is not None else default_out,
        check=args.check,
        lighteval=not args.no_lighteval and lighteval_available(),
        upstream=upstream,
        command=command,
        match_ignore=frozenset(args.match_ignore) if args.match_ignore else None,
        timeout_s=args.timeout,
    )
    try:
        with sigterm_unwinds():
            return run_regen(selected, builders, options, lambda line: print(line, flush=True))
    except BuildError as exc:  # refused before anything ran (a symlink in the fixtures folder, ...)
        print(f"evaljig-fixtures regen: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Terminated:
        print(
            "evaljig-fixtures regen: terminated (SIGTERM): the builders were stopped, nothing written", file=sys.stderr
        )
        return EXIT_TERMINATED


class Terminated(BaseException):
    """SIGTERM reached regen: raised where it runs, so the builders' group is stopped and staging removed."""


@contextlib.contextmanager
def sigterm_unwinds() -> Iterator[None]:
    """SIGTERM (a CI job cancelled, ``timeout``) unwinds regen like Ctrl-C does, instead of ending it on the spot.

    Python's default ends the process at once: the builders' process group would keep running and
    the staging folder stay in the temporary folder. Only the main thread can take the signal;
    elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: object) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@one_line_errors("regen")
def regen_main(
    builders: Sequence[Builder], argv: Sequence[str] | None = None, *, fixtures: Path, command: str | None = None
) -> int:
    """A team's build script in one call: ``raise SystemExit(regen_main(BUILDERS, fixtures=FOLDER))``.

    Takes regen's own options (``--check``, ``--only``, ``--list``, ``--no-lighteval``, ``--out``,
    ``--upstream``/``--api-key-env``, ``--match-ignore``),
    and ``fixtures`` is ``--out``'s default. ``command`` is how a re-record hint names this script
    (default: ``python <this script, relative to the working folder>``). Returns the exit code: 0 clean
    or written, 1 drift (a stale recording too) or a failed builder, 2 bad usage.
    """
    parser = argparse.ArgumentParser(description="Rebuild the fixtures byte-for-byte; --check fails on drift.")
    configure_regen(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage line
        return int(exc.code or 0)
    return regen_with(builders, args, fixtures, command or script_command())


def script_command(argv0: str | None = None) -> str:
    """How to run this build script again from here (``python ../scripts/testing/build.py``): the command a
    stale recording's re-record hint names, never evaljig's own ``evaljig-fixtures regen``."""
    script = argv0 if argv0 is not None else sys.argv[0]
    if not script.endswith(".py") or Path(script).name == "__main__.py":
        return "evaljig-fixtures regen"
    shown = os.path.relpath(Path(script).resolve(), Path.cwd()) if Path(script).is_absolute() else script
    return f"python {Path(shown).as_posix()}"
