"""``evaljig-fixtures``: check the corpus, list it, run it against an OpenAI-compatible endpoint, rebuild fixtures/.

Each subcommand is one ``Command`` in ``COMMANDS`` (name, help, arguments, handler), so adding
one (``regen``) is one function pair and one tuple entry.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evaljig_fixtures.corpus import validate_corpus
from evaljig_fixtures.errors import FixtureError
from evaljig_fixtures.fixture import CAPABILITIES
from evaljig_fixtures.regen.command import configure_regen, run_regen_command
from evaljig_fixtures.runner import CHAT_PLACEHOLDER, EMBED_PLACEHOLDER, render_table, run_corpus
from evaljig_fixtures.transport import DEFAULT_TIMEOUT, configured_client

PROG = "evaljig-fixtures"
DESCRIPTION = (
    "Check the capability fixture corpus, list it, run it against an OpenAI-compatible endpoint, or rebuild fixtures/."
)
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


@dataclass(frozen=True, slots=True)
class Command:
    """A subcommand: ``configure`` adds its arguments, ``run`` returns the exit code."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    """For subcommands that take none."""


def _validate(args: argparse.Namespace) -> int:
    try:
        fixtures = validate_corpus()
    except FixtureError as exc:
        print(exc, file=sys.stderr)
        return EXIT_FAILED
    print(f"corpus ok: {len(fixtures)} fixtures across {len(CAPABILITIES)} capabilities")
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    try:
        fixtures = validate_corpus()
    except FixtureError as exc:
        print(exc, file=sys.stderr)
        return EXIT_FAILED
    width = max(len(f.id) for f in fixtures)
    for fixture in fixtures:
        print(f"{fixture.id:<{width}}  {fixture.expected:<7}  {fixture.description}")
    return EXIT_OK


def _configure_conformance(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base-url", required=True, help="the endpoint's OpenAI base URL, e.g. http://host:8000/v1")
    parser.add_argument("--api-key-env", metavar="NAME", help="read the API key from this environment variable")
    parser.add_argument("--model", default=CHAT_PLACEHOLDER, help="chat/completion model (default: %(default)s)")
    parser.add_argument("--embed-model", default=EMBED_PLACEHOLDER, help="embedding model (default: %(default)s)")
    parser.add_argument(
        "--capability", action="append", choices=CAPABILITIES, help="only this capability (repeatable; default: all)"
    )
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per request (%(default)s)")


def _conformance(args: argparse.Namespace) -> int:
    if not args.base_url.startswith(("http://", "https://")):
        print(f"{PROG}: --base-url must start with http:// or https://", file=sys.stderr)
        return EXIT_USAGE
    api_key = ""
    if args.api_key_env:
        api_key = os.environ.get(args.api_key_env, "")
        if not api_key:
            print(f"{PROG}: environment variable {args.api_key_env} is not set or empty", file=sys.stderr)
            return EXIT_USAGE
    try:
        fixtures = validate_corpus()
    except FixtureError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    wanted = set(args.capability or CAPABILITIES)
    models = {CHAT_PLACEHOLDER: args.model, EMBED_PLACEHOLDER: args.embed_model}
    with configured_client(args.base_url, api_key, args.timeout) as client:
        outcomes = run_corpus(client, [f for f in fixtures if f.capability in wanted], models, args.timeout)
    print(f"conformance of {args.base_url} (model {args.model}, embedding model {args.embed_model})\n")
    print(render_table(outcomes, redact=[api_key]), end="")
    return EXIT_OK if all(o.passed for o in outcomes) else EXIT_FAILED


COMMANDS: tuple[Command, ...] = (
    Command("validate", "check every corpus rule; print one report naming every problem", _no_arguments, _validate),
    Command("list", "print every fixture id, whether it is valid, and its description", _no_arguments, _list),
    Command(
        "conformance",
        "run the corpus against an OpenAI-compatible endpoint and print a pass/fail table",
        _configure_conformance,
        _conformance,
    ),
    Command(
        "regen",
        "rebuild fixtures/ byte-for-byte from the builders; --check fails on drift",
        configure_regen,
        run_regen_command,
    ),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        sub = commands.add_parser(command.name, help=command.help, description=command.help)
        command.configure(sub)
        sub.set_defaults(handler=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    return handler(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
