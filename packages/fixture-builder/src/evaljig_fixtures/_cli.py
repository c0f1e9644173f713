"""``evaljig-fixtures``: rebuild fixtures/ (``regen``); the corpus subcommands moved to ``evaljig-corpus``.

``validate``, ``list`` and ``conformance`` still run here for one release: they are the
``evaljig-corpus`` commands themselves, with messages naming ``evaljig-fixtures``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from evaljig_common import one_line_errors
from evaljig_corpus._cli import COMMANDS as CORPUS_COMMANDS
from evaljig_corpus._cli import Command, build_parser, run_parsed
from evaljig_fixtures._regen.command import configure_regen, run_regen_command

PROG = "evaljig-fixtures"
DESCRIPTION = (
    "Rebuild fixtures/ byte-for-byte from the builders (validate, list and conformance moved to evaljig-corpus)."
)

#: The corpus commands, marked as moved in ``--help``, then this package's own.
COMMANDS: tuple[Command, ...] = (
    *(dataclasses.replace(c, help=f"{c.help} (deprecated: use `evaljig-corpus {c.name}`)") for c in CORPUS_COMMANDS),
    Command(
        "regen",
        "rebuild fixtures/ byte-for-byte from the builders; --check fails on drift",
        configure_regen,
        run_regen_command,
    ),
)


@one_line_errors(PROG)
def main(argv: Sequence[str] | None = None) -> int:
    return run_parsed(build_parser(PROG, COMMANDS, DESCRIPTION), argv)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
