"""``evaljig-fixtures``: rebuild a fixtures folder byte-for-byte (``regen``).

The corpus commands (``validate``, ``list``, ``conformance``) are ``evaljig-corpus``'s.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from evaljig_common import one_line_errors
from evaljig_fixtures._regen.command import configure_regen, run_regen_command

PROG = "evaljig-fixtures"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Rebuild fixtures/ byte-for-byte from the builders.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    regen_help = "rebuild fixtures/ byte-for-byte from the builders; --check fails on drift"
    configure_regen(commands.add_parser("regen", help=regen_help, description=regen_help))
    return parser


@one_line_errors(PROG)
def main(argv: Sequence[str] | None = None) -> int:
    return run_regen_command(build_parser().parse_args(argv))  # regen is the only command


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
