"""``evaljig-review`` (``evaljig review``): what a snapshot update, a regen or a re-record changed, for review.

Exit codes: 0 the review was shown (whatever it found) or the accept/reject was applied; 1 with
``--fail-on-change`` when anything changed or a recording is stale; 2 bad usage, not a git
repository, an unknown ``--base``, a GLOB matching nothing, or an output that cannot be written.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from evaljig_common import one_line_errors, write_text_atomic
from evaljig_review._config import load_config
from evaljig_review._decide import accept, reject, select
from evaljig_review._errors import ReviewError
from evaljig_review._git import Repo, toplevel
from evaljig_review._review import Entry, as_data, build_review

PROG = "evaljig-review"
EXIT_CHANGED = 1
EXIT_USAGE = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Review every changed golden, fixture, cassette and baseline against a git revision: "
        "categorised (new, removed, value-changed, format-only, reordered), with key-path diffs and stale recordings.",
        epilog="exit codes: 0 shown (whatever changed) or accept/reject applied; 1 only with --fail-on-change, when "
        "anything changed or a recording is stale; 2 bad usage, not a git repository, an unknown --base, a GLOB "
        "matching nothing, an output that cannot be written",
    )
    parser.add_argument(
        "--base", default="HEAD", metavar="REF", help="compare the working tree with REF (default HEAD)"
    )
    parser.add_argument("--golden", action="append", default=[], metavar="DIR", help="a golden folder (repeatable)")
    parser.add_argument("--fixtures", action="append", default=[], metavar="DIR", help="a fixtures folder (repeatable)")
    parser.add_argument(
        "--no-build-scripts", action="store_true", help="do not run build scripts (no builder groups, no staleness)"
    )
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--markdown", action="store_true", help="a pull-request comment (at most 65,000 characters)")
    out.add_argument("--json", action="store_true", help="stable JSON for machines")
    parser.add_argument("--html", type=Path, metavar="FILE", help="also write a self-contained HTML page to FILE")
    parser.add_argument("--accept", action="append", default=[], metavar="GLOB", help="stage matching changes")
    parser.add_argument("--reject", action="append", default=[], metavar="GLOB", help="restore the base version")
    parser.add_argument("--fail-on-change", action="store_true", help="exit 1 when anything changed or is stale")
    return parser


def _run(args: argparse.Namespace) -> int:
    root = toplevel(Path.cwd())
    repo = Repo(root, args.base)
    review = build_review(repo, load_config(root, args.golden, args.fixtures), scripts=not args.no_build_scripts)
    if args.accept or args.reject:
        chosen: dict[str, tuple[str, Entry]] = {}
        for flag, patterns in (("--accept", args.accept), ("--reject", args.reject)):
            for pattern in patterns:
                found = select(review, pattern)
                if not found:
                    raise ReviewError(f"{flag} {pattern}: matches no reviewed change (a path glob, category or kind)")
                for entry in found:
                    if chosen.get(entry.path, (flag, entry))[0] != flag:
                        raise ReviewError(f"{entry.path}: both accepted and rejected")
                    chosen[entry.path] = (flag, entry)
        lines = accept(review, [e for f, e in chosen.values() if f == "--accept"])
        lines += reject(review, [e for f, e in chosen.values() if f == "--reject"])
        print("\n".join(sorted(lines, key=lambda line: line.split(" ", 2)[1])))
        return 0
    if args.html is not None:
        from evaljig_review._html import render_html

        write_text_atomic(args.html, render_html(review))
    if args.markdown:
        from evaljig_review._markdown import render_markdown

        sys.stdout.write(render_markdown(review))
    elif args.json:
        sys.stdout.write(json.dumps(as_data(review), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    else:
        from rich.console import Console

        from evaljig_review._terminal import render_terminal

        render_terminal(review, Console(soft_wrap=True))
    changed = bool(review.entries or review.stale)
    return EXIT_CHANGED if args.fail_on_change and changed else 0


@one_line_errors(PROG)
def main(argv: Sequence[str] | None = None) -> int:
    """``evaljig-review [--base REF] [--markdown | --json] [--html FILE] [--accept GLOB] [--reject GLOB]``."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        return _run(args)
    except ReviewError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return EXIT_USAGE
