"""The ``regen`` subcommand (``evaljig-fixtures regen``) and ``regen_main`` for a team's own build script.

The default output is ``./fixtures`` (or the project's ``[tool.evaljig] fixtures``): regen runs
from the project's root, where its ``pyproject.toml`` is; library code never guesses where a
checkout is. Which builders run is decided by ``_regen.project`` (the project's own, else evaljig's).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from evaljig_common import OFFLINE_ENV, one_line_errors
from evaljig_config import lighteval_available
from evaljig_fixtures._errors import BuildError
from evaljig_fixtures._regen.builder import Builder
from evaljig_fixtures._regen.context import Upstream
from evaljig_fixtures._regen.project import project_builders
from evaljig_fixtures._regen.rebuild import EXIT_FAILED, RegenOptions, run_regen
from evaljig_fixtures._regen.selection import registry_problems, select

EXIT_USAGE = 2


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
        "--api-key-env",
        metavar="VAR",
        help="with --upstream: the environment variable holding its key (sent upstream, never written)",
    )


def run_regen_command(args: argparse.Namespace) -> int:
    """``evaljig-fixtures regen``: the project's builders (pyproject / entry points), else evaljig's own."""
    try:
        found = project_builders(Path.cwd())
    except BuildError as exc:
        print(f"evaljig-fixtures regen: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if found is None:
        from evaljig_fixtures._builders.registry import BUILDERS

        return regen_with(BUILDERS, args, Path.cwd() / "fixtures")
    return regen_with(found.builders, args, found.fixtures or Path.cwd() / "fixtures")


def regen_with(builders: Sequence[Builder], args: argparse.Namespace, default_out: Path) -> int:
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
    )
    return run_regen(selected, builders, options, lambda line: print(line, flush=True))


@one_line_errors("regen")
def regen_main(builders: Sequence[Builder], argv: Sequence[str] | None = None, *, fixtures: Path) -> int:
    """A team's build script in one call: ``raise SystemExit(regen_main(BUILDERS, fixtures=FOLDER))``.

    Takes regen's own options (``--check``, ``--only``, ``--list``, ``--no-lighteval``, ``--out``,
    ``--upstream``/``--api-key-env``),
    and ``fixtures`` is ``--out``'s default. Returns the exit code: 0 clean or written, 1 drift or a
    failed builder, 2 bad usage.
    """
    parser = argparse.ArgumentParser(description="Rebuild the fixtures byte-for-byte; --check fails on drift.")
    configure_regen(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage line
        return int(exc.code or 0)
    return regen_with(builders, args, fixtures)
