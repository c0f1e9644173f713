"""``evaljig-gateway``: serve the gateway from a shell, or print its behaviour table."""

from __future__ import annotations

import argparse
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
from evaljig_gateway._journal import DEFAULT_BODY_BYTES, DEFAULT_CAPACITY, DEFAULT_MAX_BYTES, DEFAULT_MAX_MODELS
from evaljig_gateway._limits import Limits
from evaljig_gateway._server import LOOPBACK, Gateway, GatewayStartError


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
        ).start()
    except (AnswerKeyError, GatewayStartError, ValueError, OSError) as exc:
        print(f"evaljig-gateway: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    print(f"ready {gateway.base_url}", flush=True)
    stop.wait()
    gateway.stop()  # held requests are answered and journaled before this returns, so they are counted
    dropped = f"; the journal dropped its {gateway.dropped} oldest" if gateway.dropped else ""
    print(f"stopped after {gateway.served} call(s){dropped}", flush=True)
    return 0
