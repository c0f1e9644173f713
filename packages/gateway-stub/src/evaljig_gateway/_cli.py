"""``evaljig-gateway``: serve the gateway from a shell, or print its behaviour table."""

from __future__ import annotations

import argparse
import gc
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from types import FrameType

from evaljig_common import one_line_errors
from evaljig_gateway._answers import AnswerKeyError, load_answer_key
from evaljig_gateway._app import DEFAULT_RETRY_AFTER_MS
from evaljig_gateway._behaviours import behaviour_table_markdown
from evaljig_gateway._cassette import DEFAULT_IGNORED_FIELDS, DEFAULT_MAX_CASSETTE_BYTES, CassetteError
from evaljig_gateway._journal import DEFAULT_BODY_BYTES, DEFAULT_CAPACITY, DEFAULT_MAX_BYTES, DEFAULT_MAX_MODELS
from evaljig_gateway._limits import Limits
from evaljig_gateway._server import LOOPBACK, Gateway, GatewayStartError
from evaljig_gateway._tape import ON_MISS


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evaljig-gateway", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the gateway until SIGINT/SIGTERM")
    serve.add_argument("--host", default=LOOPBACK, help="bind address (default: %(default)s)")
    serve.add_argument("--port", type=int, default=0, help="port; 0 lets the OS choose (default)")
    serve.add_argument("--answers", type=Path, help="answer key: JSON object or JSONL question/answer rows")
    serve.add_argument("--journal", type=Path, help="also append every call to this JSONL file")
    serve.add_argument("--journal-capacity", type=int, default=DEFAULT_CAPACITY, help="calls kept in memory")
    serve.add_argument(
        "--journal-max-bytes", type=int, default=DEFAULT_MAX_BYTES, help="bytes kept in memory (default: 64 MiB)"
    )
    serve.add_argument(
        "--journal-body-bytes", type=int, default=DEFAULT_BODY_BYTES, help="longer bodies are kept truncated"
    )
    serve.add_argument(
        "--journal-max-models",
        type=int,
        default=DEFAULT_MAX_MODELS,
        help="model names whose attempts are counted; the least recently called is forgotten (default: %(default)s)",
    )
    for limit in fields(Limits):  # --max-body-bytes, --max-embedding-values, ...: see _limits.Limits
        serve.add_argument(
            "--" + limit.name.replace("_", "-"),
            type=int,
            default=limit.default,
            help=f"{limit.name.removeprefix('max_').replace('_', ' ')} limit per request (default: %(default)s)",
        )
    serve.add_argument(
        "--retry-after-ms",
        type=int,
        default=DEFAULT_RETRY_AFTER_MS,
        help="retry-after-ms sent with 429/500 (default: %(default)s)",
    )
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
        + ", ".join(sorted(DEFAULT_IGNORED_FIELDS))
        + ")",
    )
    tape.add_argument(
        "--max-cassette-bytes",
        type=int,
        default=DEFAULT_MAX_CASSETTE_BYTES,
        help="refuse to read or write a larger cassette (default: 256 MiB)",
    )
    commands.add_parser("behaviours", help="print the model-name behaviour table (Markdown)")
    return parser


@one_line_errors("evaljig-gateway")
def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "behaviours":
        sys.stdout.write(behaviour_table_markdown())
        return 0
    return _serve(args)


def _serve(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        print(f"evaljig-gateway: --port must be between 0 and 65535, got {args.port}", file=sys.stderr)
        return 2
    try:
        answers = load_answer_key(args.answers) if args.answers else None
        gateway = Gateway(
            host=args.host,
            port=args.port,
            answers=answers,
            journal_path=args.journal,
            journal_capacity=args.journal_capacity,
            journal_max_bytes=args.journal_max_bytes,
            journal_body_bytes=args.journal_body_bytes,
            journal_max_models=args.journal_max_models,
            limits=Limits(**{f.name: getattr(args, f.name) for f in fields(Limits)}),
            retry_after_ms=args.retry_after_ms,
            replay=args.replay,
            record=args.record,
            upstream=args.upstream,
            api_key_env=args.api_key_env,
            on_miss=args.on_miss,
            ignore_fields=args.match_ignore,
            max_cassette_bytes=args.max_cassette_bytes,
        ).start()
    except (AnswerKeyError, CassetteError, GatewayStartError, ValueError, OSError) as exc:
        print(f"evaljig-gateway: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    # what start-up made (imported modules, the vocabulary, an answer key or cassette) lives as long as
    # the process: set apart from the collector, a full collection while serving looks only at what
    # requests made, which keeps its pause (every client waits through it) short
    gc.freeze()
    print(f"ready {gateway.base_url}", flush=True)
    stop.wait()
    try:
        gateway.stop()  # held requests are answered and journaled before this returns, so they are counted
    except CassetteError as exc:
        print(f"evaljig-gateway: {exc}", file=sys.stderr)
        return 2
    dropped = f"; the journal dropped its {gateway.dropped} oldest" if gateway.dropped else ""
    print(f"stopped after {gateway.served} call(s){dropped}", flush=True)
    tape = gateway.tape
    if tape is not None and tape.recorder is not None:
        where = f"to {tape.path}" if tape.written else f"(nothing written: {tape.path} left as it was)"
        print(f"recorded {tape.written} exchange(s) {where}", flush=True)
    return 0
