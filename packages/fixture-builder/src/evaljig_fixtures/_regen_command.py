"""``regen``: ``evaljig-fixtures regen`` (a project's registered builders) and ``regen_main`` (a build script).

``evaljig-fixtures regen`` (run where the project's ``pyproject.toml`` is) looks, in order, at::

    [tool.evaljig]
    builders = ["fixtures_build:BUILDERS", "more.builders:dataset"]   # or a table: name = "module:attr"
    fixtures = "tests/lighteval/fixtures"                             # --out's default (else ./fixtures)

then at the entry point group ``evaljig.builders`` of the installed distributions. With neither
it refuses, naming the repository's own build script when it finds one (``evaljig init`` writes
``build_lighteval_fixture.py``; evaljig's own repository has one too, so no builder set ships
inside the package). Each reference names a ``Builder``, a sequence of them, or a function taking
no argument that returns either; modules are imported with the project's folder first on
``sys.path``. A build script calls ``regen_main(BUILDERS, fixtures=FOLDER)`` instead.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
import tomllib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from evaljig_common import OFFLINE_ENV, one_line_errors
from evaljig_config import lighteval_available
from evaljig_fixtures._errors import BuildError
from evaljig_fixtures._regen_builder import Builder, Upstream, registry_problems, select
from evaljig_fixtures._regen_process import DEFAULT_TIMEOUT_S
from evaljig_fixtures._regen_run import EXIT_FAILED, RegenOptions, run_regen

# --- A project's own builders, named in its ``pyproject.toml`` or registered by entry point; else a
# refusal naming its build script.
ENTRY_POINT_GROUP = "evaljig.builders"
PYPROJECT = "pyproject.toml"


@dataclass(frozen=True)
class ProjectBuilders:
    builders: tuple[Builder, ...]
    fixtures: Path | None
    """The fixtures folder the project names (``[tool.evaljig] fixtures``), absolute; None when unnamed."""
    origin: str


def as_builders(value: Any, where: str) -> tuple[Builder, ...]:
    """A ``Builder``, a sequence of them, or a no-argument function returning either, as a tuple."""
    if callable(value) and not isinstance(value, Builder):
        value = value()
    if isinstance(value, Builder):
        return (value,)
    if isinstance(value, Sequence) and not isinstance(value, str) and all(isinstance(b, Builder) for b in value):
        return tuple(value)
    raise BuildError(f"{where}: must be a Builder, a sequence of Builders or a function returning one, got {value!r}")


@contextmanager
def _importable_from(folder: Path) -> Iterator[None]:
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        sys.path.remove(str(folder))


def load_reference(reference: str, where: str) -> tuple[Builder, ...]:
    """``module:attr`` (``attr`` may be dotted) resolved to builders; ``BuildError`` naming ``where`` otherwise."""
    module_name, sep, attr = reference.partition(":")
    if not sep or not module_name or not attr:
        raise BuildError(f"{where}: {reference!r} is not 'module:attribute'")
    try:
        value: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise BuildError(f"{where}: cannot import {module_name}: {exc}") from exc
    for part in attr.split("."):
        if not hasattr(value, part):
            raise BuildError(f"{where}: {module_name} has no attribute {attr}")
        value = getattr(value, part)
    return as_builders(value, where)


def _from_pyproject(path: Path) -> ProjectBuilders | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BuildError(f"{path}: cannot read: {exc}") from exc
    table = data.get("tool", {}).get("evaljig", {})
    if not isinstance(table, dict) or "builders" not in table:
        return None
    refs = table["builders"]
    items = list(refs.items()) if isinstance(refs, dict) else list(enumerate(refs)) if isinstance(refs, list) else None
    if not items or not all(isinstance(ref, str) for _, ref in items):
        raise BuildError(f"{path}: [tool.evaljig] builders: must be a non-empty list (or table) of 'module:attr'")
    fixtures = table.get("fixtures")
    if fixtures is not None and not isinstance(fixtures, str):
        raise BuildError(f"{path}: [tool.evaljig] fixtures: must be a path (a string)")
    builders: list[Builder] = []
    with _importable_from(path.parent):
        for key, ref in items:
            builders += load_reference(ref, f"{path}: [tool.evaljig] builders[{key!r}]")
    folder = (path.parent / fixtures).resolve() if fixtures else None
    return ProjectBuilders(tuple(builders), folder, f"{path} [tool.evaljig]")


def _from_entry_points() -> ProjectBuilders | None:
    found = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: (ep.name, ep.value))
    if not found:
        return None
    builders: list[Builder] = []
    for ep in found:
        where = f"entry point {ep.name} = {ep.value!r} (group {ENTRY_POINT_GROUP})"
        try:
            value = ep.load()
        except ImportError as exc:
            raise BuildError(f"{where}: cannot import: {exc}") from exc
        builders += as_builders(value, where)
    return ProjectBuilders(tuple(builders), None, f"entry points {ENTRY_POINT_GROUP}")


def project_builders(folder: Path) -> ProjectBuilders | None:
    """The builders the project in ``folder`` registers (pyproject first, then entry points), or None."""
    pyproject = folder / PYPROJECT
    found = _from_pyproject(pyproject) if pyproject.is_file() else None
    return found if found is not None else _from_entry_points()


SCAFFOLD_SCRIPT = "build_lighteval_fixture.py"
_SKIPPED = frozenset({"node_modules", "venv", "site-packages", "__pycache__", "dist", "build", "wheels"})

_MAX_DEPTH, _MAX_FOLDERS = 5, 2000


def find_build_scripts(folder: Path) -> list[str]:
    """The scaffold's build scripts below ``folder`` (relative, shallowest first), found by a bounded walk."""
    found: list[str] = []
    queue = [(folder, 0)]
    visited = 0
    while queue and visited < _MAX_FOLDERS:
        current, depth = queue.pop(0)
        visited += 1
        try:
            entries = sorted(current.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.name == SCAFFOLD_SCRIPT and entry.is_file():
                found.append(entry.relative_to(folder).as_posix())
            elif (
                depth < _MAX_DEPTH and entry.is_dir() and not entry.is_symlink()
                and not entry.name.startswith(".") and entry.name not in _SKIPPED
            ):  # fmt: skip
                queue.append((entry, depth + 1))
    return found


def not_here(folder: Path) -> str:
    """Why ``evaljig-fixtures regen`` does nothing in ``folder``, and the command that rebuilds its fixtures."""
    scripts = find_build_scripts(folder)
    where = (
        f"{folder} registers no builders ([tool.evaljig] builders in {PYPROJECT}, or entry points "
        f"{ENTRY_POINT_GROUP}), and no fixtures ship inside evaljig-fixtures"
    )
    if scripts:
        return f"{where}; fix: run this repository's build script: python {scripts[0]}"
    return (
        f"{where}; fix: run your fixtures' build script (`evaljig init` writes "
        f"scripts/testing/{SCAFFOLD_SCRIPT}), or name your builders in {PYPROJECT} [tool.evaljig] builders"
    )


# --- The ``regen`` options, ``evaljig-fixtures regen`` and ``regen_main``; SIGTERM unwinds like Ctrl-C.
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
        no_lighteval=args.no_lighteval,
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
    ``--upstream``/``--api-key-env``, ``--match-ignore``, ``--timeout``),
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
