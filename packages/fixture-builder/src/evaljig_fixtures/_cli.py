"""``evaljig-fixtures``: rebuild fixtures/ (``regen``); the corpus subcommands moved to ``evaljig-corpus``.

``validate``, ``list`` and ``conformance`` still run here for one release: they are the
``evaljig-corpus`` commands themselves, with messages naming ``evaljig-fixtures``.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence

from evaljig_common import one_line_errors
from evaljig_corpus._cli import COMMANDS as CORPUS_COMMANDS
from evaljig_corpus._cli import Command, build_parser, run_parsed
from evaljig_fixtures._init import init_main
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
    Command(
        "init",
        "scaffold LightEval contract tests into a repository (see `evaljig-fixtures init --help`)",
        lambda parser: None,
        lambda args: init_main([]),
    ),
)


@one_line_errors(PROG)
def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["init"]:  # its own parser: `evaljig init` (the evaljig package) takes the same arguments
        return init_main(args[1:])
    return run_parsed(build_parser(PROG, COMMANDS, DESCRIPTION), args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
