"""Run a command with a lighteval preload server beside it, and route CLI runs through it.

``serving()`` starts :mod:`evaljig_config._preload_server` on a socket, exports the socket as
``EVALJIG_LIGHTEVAL_SERVER`` to the command it wraps, and stops the server afterwards. While
that variable is set, :func:`evaljig_config.run_cli` starts ``lighteval`` through the small
client (:mod:`evaljig_config._preload_client`) instead of executing it: the same console
script, argv, environment, working directory and process group, ~7 s of CPU cheaper.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from evaljig_common import OFFLINE_ENV
from evaljig_config import _preload_client
from evaljig_config._errors import ConfigError

SERVER_ENV = "EVALJIG_LIGHTEVAL_SERVER"
"""The socket of a running preload server; set by :func:`serving` for the command it runs."""
_MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux
STOP_GRACE_S = 10.0


def client_argv(argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """``argv`` (a console script and its arguments) routed through the server named in ``env``, if any."""
    server = env.get(SERVER_ENV)
    if not server:
        return list(argv)
    return [sys.executable, "-I", _preload_client.__file__, server, *argv]


def _socket_dir() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="evaljig-preload-"))
    if len(str(folder / "server.sock")) > _MAX_SOCKET_PATH:
        shutil.rmtree(folder, ignore_errors=True)
        raise ConfigError(f"{folder}: too long for a Unix socket path; set TMPDIR to a shorter folder")
    return folder


@contextlib.contextmanager
def serving(python: str = sys.executable, modules: Sequence[str] = ()) -> Iterator[dict[str, str]]:
    """A preload server for the block; yields the environment for the block's command.

    That environment is this one, offline (:data:`OFFLINE_ENV`), plus the server's socket.
    ``modules`` replaces the server's default preload list. The server ends when the block
    does, or by itself when this process dies (its stdin closes).
    """
    folder = _socket_dir()
    path = str(folder / "server.sock")
    env = {**os.environ, **OFFLINE_ENV}  # the runs' settings, so the preloaded imports see what a run would
    server = subprocess.Popen(
        [python, "-m", "evaljig_config._preload_server", path, *modules],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        process_group=0,
    )
    try:
        assert server.stdout is not None
        if not server.stdout.readline():  # the server says it listens (it imports the libraries after that)
            raise ConfigError(f"the lighteval preload server exited at start ({server.wait()}); see stderr above")
        server.stdout.close()
        yield {**env, SERVER_ENV: path}
    finally:
        assert server.stdin is not None
        server.stdin.close()
        try:
            server.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        shutil.rmtree(folder, ignore_errors=True)


def run_with_server(command: Sequence[str]) -> int:
    """Run ``command`` with a preload server beside it; its exit code.

    Ctrl-C reaches the command from the terminal and is left to it; SIGTERM is passed on.
    """
    if not command:
        raise ConfigError("lighteval preload: give the command to run after --, e.g. -- pytest -n 2")
    if shutil.which(command[0]) is None:
        raise ConfigError(f"{command[0]}: cannot run: not found or not executable")
    with serving() as env:
        proc = subprocess.Popen(list(command), env=env)
        previous_int = signal.signal(signal.SIGINT, signal.SIG_IGN)
        previous_term = signal.signal(signal.SIGTERM, lambda signum, _: proc.send_signal(signum))
        try:
            return proc.wait()
        finally:
            signal.signal(signal.SIGINT, previous_int)
            signal.signal(signal.SIGTERM, previous_term)
