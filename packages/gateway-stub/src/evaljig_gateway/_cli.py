"""``evaljig-gateway``: serve the gateway from a shell, print its behaviour table, or judge a client's retries."""

from __future__ import annotations

import argparse
import gc
import json
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from evaljig_common import one_line_errors
from evaljig_gateway._answers import AnswerKeyError
from evaljig_gateway._app import DEFAULT_RETRY_AFTER_MS
from evaljig_gateway._behaviours import behaviour_table_markdown
from evaljig_gateway._cassette import DEFAULT_IGNORED_FIELDS, DEFAULT_MAX_CASSETTE_BYTES, CassetteError
from evaljig_gateway._journal import (
    DEFAULT_BODY_BYTES,
    DEFAULT_CAPACITY,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_MODELS,
    Journal,
)
from evaljig_gateway._limits import Limits
from evaljig_gateway._server import LOOPBACK, Gateway, GatewayStartError
from evaljig_gateway._tape import ON_MISS, Record, Replay, check_flags
from evaljig_gateway._verdict import DEFAULT_MAX_ATTEMPTS, VerdictInputError, judge, load_journal_file


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evaljig-gateway", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the gateway until SIGINT/SIGTERM")
    serve.add_argument("--host", default=LOOPBACK, help="bind address (default: %(default)s)")
    serve.add_argument("--port", type=int, default=0, help="port; 0 lets the OS choose (default)")
    serve.add_argument("--answers", type=Path, help="answer key: JSON object or JSONL question/answer rows")
    serve.add_argument("--journal", type=Path, help="also append every call to this JSONL file")

    def add_int(flag: str, default: object, text: str) -> None:
        serve.add_argument(flag, type=int, default=default, help=text)

    add_int("--journal-capacity", DEFAULT_CAPACITY, "calls kept in memory")
    add_int("--journal-max-bytes", DEFAULT_MAX_BYTES, "bytes kept in memory (default: 64 MiB)")
    add_int("--journal-body-bytes", DEFAULT_BODY_BYTES, "longer bodies are kept truncated")
    add_int(
        "--journal-max-models",
        DEFAULT_MAX_MODELS,
        "model names whose attempts are counted; the least recently called is forgotten (default: %(default)s)",
    )
    for limit in fields(Limits):  # --max-body-bytes, --max-embedding-values, ...: see _limits.Limits
        what = limit.name.removeprefix("max_").replace("_", " ")
        add_int("--" + limit.name.replace("_", "-"), limit.default, f"{what} limit per request (default: %(default)s)")
    add_int("--retry-after-ms", DEFAULT_RETRY_AFTER_MS, "retry-after-ms sent with 429/500 (default: %(default)s)")
    tape = serve.add_argument_group("record and replay (see docs/gateway.md)")
    tape.add_argument("--replay", type=Path, metavar="CASSETTE", help="answer API requests from this cassette")
    tape.add_argument(
        "--record", type=Path, metavar="CASSETTE", help="forward API requests to --upstream; write them here on stop"
    )
    tape.add_argument("--upstream", metavar="URL", help="an OpenAI base URL with its /v1 (https://api.openai.com/v1)")
    tape.add_argument("--api-key-env", metavar="VAR", help="send 'Authorization: Bearer $VAR' to the upstream")
    tape.add_argument(
        "--on-miss",
        choices=ON_MISS,
        default="error",
        help="a request the cassette lacks: answer 404 (error, default) or forward and record it (needs --upstream)",
    )
    tape.add_argument(
        "--match-ignore",
        action="append",
        metavar="FIELD",
        help="top-level request field left out of matching (repeatable; replaces the default: "
        f"{', '.join(sorted(DEFAULT_IGNORED_FIELDS))})",
    )
    tape.add_argument(
        "--max-cassette-bytes",
        type=int,
        default=DEFAULT_MAX_CASSETTE_BYTES,
        help="refuse to read or write a larger cassette (default: 256 MiB)",
    )
    commands.add_parser("behaviours", help="print the model-name behaviour table (Markdown)")
    verdict = commands.add_parser(
        "verdict",
        help="judge a client's retries from a journal; exit 1 on a finding (see docs/gateway.md)",
        description="Judge a client's retries from the gateway's timed journal: "
        "exit 0 clean, 1 on a finding, 2 on bad input.",
    )
    source = verdict.add_mutually_exclusive_group(required=True)
    source.add_argument("--url", help="a running gateway's base URL (its GET /_gateway/calls is read)")
    source.add_argument("--journal", type=Path, metavar="FILE.jsonl", help="a journal file (serve --journal)")
    verdict.add_argument(
        "--max-attempts",
        type=int,
        default=DEFAULT_MAX_ATTEMPTS,
        help="attempts allowed per logical request before retry_storm (default: %(default)s)",
    )
    verdict.add_argument("--json", action="store_true", help="print the verdict as JSON")
    return parser


@one_line_errors("evaljig-gateway")
def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "behaviours":
        sys.stdout.write(behaviour_table_markdown())
        return 0
    if args.command == "verdict":
        return _verdict(args)
    return _serve(args)


def _refuse(message: str) -> int:
    """Print ``message`` on stderr as the one line of an error; return the exit code of a refusal (2)."""
    print(f"evaljig-gateway: {message}", file=sys.stderr)
    return 2


def _verdict(args: argparse.Namespace) -> int:
    if args.max_attempts < 1:
        return _refuse(f"--max-attempts must be at least 1, got {args.max_attempts}")
    if args.journal is not None:
        source, fix = str(args.journal), "pass a journal written by 'evaljig-gateway serve --journal' (this version)"
    else:
        source, fix = args.url.rstrip("/") + "/_gateway/calls", "point --url at a running gateway's base URL"
    try:
        entries = load_journal_file(args.journal) if args.journal is not None else _fetch_calls(source)
        result = judge(entries, max_attempts=args.max_attempts, source=source)
    except VerdictInputError as exc:
        return _refuse(f"verdict: {exc}; fix: {fix}")
    sys.stdout.write(json.dumps(result.as_dict(), indent=2) + "\n" if args.json else result.render())
    return 0 if result.passed else 1


def _fetch_calls(where: str) -> list[Any]:
    """The entries ``GET where`` (a gateway's ``/_gateway/calls``) answers; failing that, a ``VerdictInputError``."""
    import httpx  # only this subcommand talks to a server

    try:
        reply = httpx.get(where, timeout=30)
        calls = reply.json()["calls"] if reply.status_code == 200 else None
    except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
        raise VerdictInputError(f"{where}: cannot read the journal ({type(exc).__name__}: {exc})") from exc
    if not isinstance(calls, list):
        raise VerdictInputError(f"{where}: answered {reply.status_code} without a 'calls' list")
    return calls


def _tape(args: argparse.Namespace) -> Replay | Record | None:
    """The tape flags as one ``Gateway`` option (none without ``--replay`` or ``--record``), checked first."""
    replay, record, upstream, api_key_env = args.replay, args.record, args.upstream, args.api_key_env
    check_flags(replay is not None, record is not None, upstream, api_key_env, args.on_miss, args.max_cassette_bytes)
    if record is not None:
        return Record(record, upstream, api_key_env, args.match_ignore, args.max_cassette_bytes)
    if replay is not None:
        return Replay(replay, args.on_miss, upstream, api_key_env, args.match_ignore, args.max_cassette_bytes)
    return None


def _serve(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        return _refuse(f"--port must be between 0 and 65535, got {args.port}")
    try:
        gateway = Gateway(
            host=args.host,
            port=args.port,
            answers=args.answers,  # a Path: the Gateway loads it (load_answer_key)
            limits=Limits(**{f.name: getattr(args, f.name) for f in fields(Limits)}),
            journal=Journal(
                args.journal_capacity,
                args.journal,
                max_bytes=args.journal_max_bytes,
                body_bytes=args.journal_body_bytes,
                max_models=args.journal_max_models,
            ),
            tape=_tape(args),
            retry_after_ms=args.retry_after_ms,
        ).start()
    except (AnswerKeyError, CassetteError, GatewayStartError, ValueError, OSError) as exc:
        return _refuse(str(exc))
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda _signum, _frame: stop.set())
    # what start-up made (imported modules, the vocabulary, an answer key or cassette) lives as long as
    # the process: set apart from the collector, a full collection while serving looks only at what
    # requests made, which keeps its pause (every client waits through it) short
    gc.freeze()
    print(f"ready {gateway.base_url}", flush=True)
    stop.wait()
    try:
        gateway.stop()  # held requests are answered and journaled before this returns, so they are counted
    except CassetteError as exc:
        return _refuse(str(exc))
    dropped = f"; the journal dropped its {gateway.dropped} oldest" if gateway.dropped else ""
    print(f"stopped after {gateway.served} call(s){dropped}", flush=True)
    tape = gateway.tape
    if tape is not None and tape.recorder is not None:
        where = f"to {tape.path}" if tape.written else f"(nothing written: {tape.path} left as it was)"
        print(f"recorded {tape.written} exchange(s) {where}", flush=True)
    return 0
