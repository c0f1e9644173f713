"""``evaljig-corpus``: check the corpus, list it, run it against an OpenAI-compatible endpoint.

Each subcommand is one ``Command`` in ``COMMANDS`` (name, help, arguments, handler).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from evaljig_common import one_line_errors
from evaljig_corpus._conformance import FAULT_CAPABILITIES
from evaljig_corpus._corpus_run import CHAT_PLACEHOLDER, EMBED_PLACEHOLDER, redacted, render_table, run_corpus
from evaljig_corpus._errors import FixtureError
from evaljig_corpus._fixture import CAPABILITIES
from evaljig_corpus._loader import validate_corpus
from evaljig_corpus._transport import DEFAULT_TIMEOUT, configured_client

PROG = "evaljig-corpus"
DESCRIPTION = "Check the capability fixture corpus, list it, or run it against an OpenAI-compatible endpoint."
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


@dataclass(frozen=True, slots=True)
class Command:
    """A subcommand: ``configure`` adds its arguments, ``run`` returns the exit code."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def _corpus_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        help="a corpus folder of your own (capability folders of fixture JSON); default: the packaged corpus",
    )


def _validate(args: argparse.Namespace) -> int:
    try:
        fixtures = validate_corpus(args.corpus)
    except FixtureError as exc:
        print(exc, file=sys.stderr)
        return EXIT_FAILED
    capabilities = len({f.capability for f in fixtures})
    where = f" in {args.corpus}" if args.corpus is not None else ""
    print(f"corpus ok{where}: {len(fixtures)} fixtures across {capabilities} capabilities")
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    try:
        fixtures = validate_corpus(args.corpus)
    except FixtureError as exc:
        print(exc, file=sys.stderr)
        return EXIT_FAILED
    width = max(len(f.id) for f in fixtures)
    for fixture in fixtures:
        print(f"{fixture.id:<{width}}  {fixture.expected:<7}  {fixture.description}")
    return EXIT_OK


def _configure_conformance(parser: argparse.ArgumentParser) -> None:
    _corpus_argument(parser)
    parser.add_argument("--base-url", required=True, help="the endpoint's OpenAI base URL, e.g. http://host:8000/v1")
    parser.add_argument("--api-key-env", metavar="NAME", help="read the API key from this environment variable")
    parser.add_argument("--model", default=CHAT_PLACEHOLDER, help="chat/completion model (default: %(default)s)")
    parser.add_argument("--embed-model", default=EMBED_PLACEHOLDER, help="embedding model (default: %(default)s)")
    parser.add_argument(
        "--capability",
        action="append",
        choices=CAPABILITIES,
        help="only this capability (repeatable; default: every capability but the fault ones)",
    )
    parser.add_argument(
        "--faults",
        action="store_true",
        help=f"also run the fault capabilities ({', '.join(FAULT_CAPABILITIES)}): the target must play"
        " the gateway's failure models (think-empty-gpt-stub, cut-2-gpt-stub, ...)",
    )
    parser.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT, help="seconds per request (%(default)s)")


def _seconds(text: str) -> float:
    """``--timeout``: httpx takes negative or NaN timeouts and then fails with a traceback on first use."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {text!r}")
    return value


class _UsageError(Exception):
    """A bad argument or environment variable: one line on stderr, exit 2."""


def _api_key(variable: str | None) -> str:
    """The key from ``variable`` ("" without one); the message names the variable, never the value."""
    if not variable:
        return ""
    key = os.environ.get(variable, "")
    if not key:
        raise _UsageError(f"environment variable {variable} is not set or empty")
    if not (key.isascii() and key.isprintable()):
        # httpx would refuse the header and print it, escaped, in a traceback
        reason = "must hold printable ASCII (no control or non-ASCII characters)"
        raise _UsageError(f"environment variable {variable} {reason}")
    return key


def _client(base_url: str, api_key: str, timeout: float) -> httpx.Client:
    try:
        return configured_client(base_url, api_key, timeout)
    except httpx.InvalidURL as exc:
        raise _UsageError(f"--base-url is not a valid URL: {exc}") from None


def _connection_problem(client: httpx.Client) -> str | None:
    """Why the target cannot be reached, or None: any HTTP answer, even an error status, means it is there.

    Without this an unreachable target still "passes" every invalid fixture refused client-side.
    """
    try:
        client.get("/models")
    except (httpx.ConnectError, httpx.ConnectTimeout, UnicodeError) as exc:  # UnicodeError: host name is not IDNA
        return f"{type(exc).__name__}: {exc}"
    except httpx.HTTPError:
        return None  # it answered, badly: the fixtures report how
    return None


def _conformance(args: argparse.Namespace) -> int:
    try:
        if not args.base_url.startswith(("http://", "https://")):
            raise _UsageError("--base-url must start with http:// or https://")
        api_key = _api_key(args.api_key_env)
        client = _client(args.base_url, api_key, args.timeout)
    except _UsageError as exc:
        print(f"{args.prog}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    with client:
        return _run_conformance(args, client, api_key)


def _run_conformance(args: argparse.Namespace, client: httpx.Client, api_key: str) -> int:
    try:
        fixtures = validate_corpus(args.corpus)
    except FixtureError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    problem = _connection_problem(client)
    if problem is not None:
        print(f"{args.prog}: cannot connect to {args.base_url}: {redacted(problem, [api_key])}", file=sys.stderr)
        return EXIT_FAILED
    wanted = set(args.capability or (c for c in CAPABILITIES if args.faults or c not in FAULT_CAPABILITIES))
    if args.capability and args.faults:
        wanted |= set(FAULT_CAPABILITIES)
    models = {CHAT_PLACEHOLDER: args.model, EMBED_PLACEHOLDER: args.embed_model}
    chosen = [f for f in fixtures if f.capability in wanted]
    verdicts = run_corpus(client, chosen, models, args.timeout, redact=[api_key])
    print(f"conformance of {args.base_url} (model {args.model}, embedding model {args.embed_model})\n")
    print(render_table(verdicts, redact=[api_key]), end="")
    return EXIT_OK if all(v.passed for v in verdicts) else EXIT_FAILED


COMMANDS: tuple[Command, ...] = (
    Command("validate", "check every corpus rule; print one report naming every problem", _corpus_argument, _validate),
    Command("list", "print every fixture id, whether it is valid, and its description", _corpus_argument, _list),
    Command(
        "conformance",
        "run the corpus against an OpenAI-compatible endpoint and print a pass/fail table",
        _configure_conformance,
        _conformance,
    ),
)


def build_parser(
    prog: str = PROG, commands: Sequence[Command] = COMMANDS, description: str = DESCRIPTION
) -> argparse.ArgumentParser:
    """One subparser per command; ``args.prog`` is the program name messages start with."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.set_defaults(prog=prog)
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in commands:
        sub = subparsers.add_parser(command.name, help=command.help, description=command.help)
        command.configure(sub)
        sub.set_defaults(handler=command.run)
    return parser


def run_parsed(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    """Parse ``argv`` and run the chosen command's handler."""
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    return handler(args)


@one_line_errors(PROG)
def main(argv: Sequence[str] | None = None) -> int:
    return run_parsed(build_parser(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
