"""Start a Python console script through the preload server, or, failing that, exec it.

Run by path with ``python -I`` (standard library only, so it starts in milliseconds):

    python -I _preload_client.py SOCKET SCRIPT [ARGS...]

It hands the server its argv, environment, working directory, process group and its own
stdin/stdout/stderr, then waits and exits the way the script did (exit code, or the same
signal). Whenever the server cannot run the script faithfully (not running, refused because
the environment differs, wrong interpreter) the client execs ``SCRIPT`` itself after one
line on stderr: a slower run, never a different one.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

#: One request or reply is one SOCK_SEQPACKET message; a bigger request is refused, not truncated.
MAX_MESSAGE_BYTES = 1 << 20
EXIT_SERVER_LOST = 70  # EX_SOFTWARE: the server went away while the script ran
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def send_message(sock: socket.socket, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
    data = json.dumps(message).encode()
    if len(data) > MAX_MESSAGE_BYTES:
        raise ValueError(f"message of {len(data)} bytes exceeds {MAX_MESSAGE_BYTES}")
    socket.send_fds(sock, [data], list(fds))


def receive_message(sock: socket.socket, max_fds: int = 0) -> tuple[dict[str, Any] | None, list[int]]:
    """One message and the descriptors sent with it; (None, []) when the peer hung up."""
    data, fds, flags, _ = socket.recv_fds(sock, MAX_MESSAGE_BYTES + 1, max_fds)
    if flags & socket.MSG_CTRUNC:
        for fd in fds:
            os.close(fd)
        raise ValueError("too many descriptors")
    if not data:
        return None, fds
    try:
        if flags & socket.MSG_TRUNC or len(data) > MAX_MESSAGE_BYTES:
            raise ValueError(f"message exceeds {MAX_MESSAGE_BYTES} bytes")
        message = json.loads(data)
        if not isinstance(message, dict):
            raise ValueError("message is not a JSON object")
    except ValueError:
        for fd in fds:
            os.close(fd)
        raise
    return message, fds


#: Starts every line the client writes on the script's stderr (a fallback to an ordinary start).
NOTE_PREFIX = "evaljig preload:"


def _exec_instead(argv: list[str], why: str) -> NoReturn:
    print(f"{NOTE_PREFIX} {why}; starting {Path(argv[0]).name} normally", file=sys.stderr, flush=True)
    os.execv(argv[0], argv)


def _finish(reply: dict[str, Any] | None, pid: int) -> int:
    signum = reply.get("signal") if reply is not None else None
    if isinstance(signum, int):
        signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
        os.kill(os.getpid(), signum)  # end the way the script ended
        return 128 + signum
    code = reply.get("exit") if reply is not None else None
    if isinstance(code, int):
        return code
    print(f"{NOTE_PREFIX} the server went away while pid {pid} ran", file=sys.stderr, flush=True)
    return EXIT_SERVER_LOST


def main(argv: Sequence[str]) -> int:
    if len(argv) < 2:
        print("usage: _preload_client.py SOCKET SCRIPT [ARGS...]", file=sys.stderr)
        return 2
    server, script_argv = argv[0], list(argv[1:])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        sock.connect(server)
        request = {"argv": script_argv, "env": dict(os.environ), "cwd": str(Path.cwd()), "pgid": os.getpgrp()}
        send_message(sock, request, [0, 1, 2])
        first, _ = receive_message(sock)
    except (OSError, ValueError) as exc:
        sock.close()
        _exec_instead(script_argv, f"no preload server at {server} ({exc})")
    if first is None or "refused" in first:
        sock.close()
        _exec_instead(script_argv, f"the preload server refused: {(first or {}).get('refused', 'it hung up')}")
    pid = int(first["pid"])

    def forward(signum: int, _frame: FrameType | None) -> None:
        """A signal meant for the script (the client stands in for it) goes on to the script."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    for signum in _FORWARDED:
        signal.signal(signum, forward)
    while True:
        try:
            reply, _ = receive_message(sock)
        except InterruptedError:
            continue
        except (OSError, ValueError):
            reply = None
        return _finish(reply, pid)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
