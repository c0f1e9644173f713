"""The ``regen`` subcommand: arguments and handler for ``evaljig-fixtures regen``.

The default output is ``./fixtures``: regen runs from the repository root (as ``nox -s regen``
does); library code never guesses where a checkout is.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from evaljig_common import OFFLINE_ENV
from evaljig_config import lighteval_available
from evaljig_fixtures._builders.registry import BUILDERS
from evaljig_fixtures._regen.rebuild import EXIT_FAILED, RegenOptions, run_regen
from evaljig_fixtures._regen.selection import registry_problems, select


def configure_regen(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="the fixtures folder (default: ./fixtures; run from the repo root)"
    )
    parser.add_argument(
        "--check", action="store_true", help="rebuild into a temporary folder and fail (exit 1) on any byte of drift"
    )
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", choices=[b.name for b in BUILDERS], help="run only these builders"
    )
    parser.add_argument(
        "--no-lighteval",
        action="store_true",
        help="skip the builders that run the real lighteval (they are skipped anyway where it is not installed)",
    )
    parser.add_argument("--list", action="store_true", help="list the builders, their outputs and requirements")


def run_regen_command(args: argparse.Namespace) -> int:
    problems = registry_problems(BUILDERS)
    if problems:
        print("\n".join(f"evaljig-fixtures regen: {p}" for p in problems), file=sys.stderr)
        return EXIT_FAILED
    if args.list:
        for builder in BUILDERS:
            needs = f"  (requires {', '.join(sorted(builder.requires))})" if builder.requires else ""
            print(f"{builder.name:<12} {', '.join(builder.outputs)}{needs}  {builder.description}")
        return 0
    for name, value in OFFLINE_ENV.items():  # builders must never reach for the network (litellm's cost map, hubs)
        os.environ.setdefault(name, value)
    options = RegenOptions(
        out_dir=args.out if args.out is not None else Path.cwd() / "fixtures",
        check=args.check,
        lighteval=not args.no_lighteval and lighteval_available(),
    )
    return run_regen(select(BUILDERS, args.only), BUILDERS, options, lambda line: print(line, flush=True))
