"""``evaljig-fixtures``: rebuild a fixtures folder byte-for-byte (``regen``); scaffold a team's LEV tests (``init``).

The corpus commands (``validate``, ``list``, ``conformance``) are ``evaljig-corpus``'s.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from evaljig_common import one_line_errors
from evaljig_fixtures._init_command import init_main
from evaljig_fixtures._regen_command import configure_regen, run_regen_command

PROG = "evaljig-fixtures"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Rebuild fixtures/ byte-for-byte from the builders.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    regen_help = "rebuild fixtures/ byte-for-byte from the builders; --check fails on drift"
    configure_regen(commands.add_parser("regen", help=regen_help, description=regen_help))
    init_help = "scaffold LightEval contract tests into a repository (see `evaljig-fixtures init --help`)"
    commands.add_parser("init", help=init_help, add_help=False)
    return parser


@one_line_errors(PROG)
def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["init"]:  # its own parser: `evaljig init` (the evaljig package) takes the same arguments
        return init_main(args[1:])
    return run_regen_command(build_parser().parse_args(args))


if __name__ == "__main__":
    raise SystemExit(main())
