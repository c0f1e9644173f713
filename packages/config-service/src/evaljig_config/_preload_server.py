"""A fork server that starts lighteval's CLI with its heavy, settings-free libraries already imported.

Every ``lighteval`` process spends ~13 s of CPU importing torch, sklearn, scipy, pandas,
inspect_ai and litellm before it does anything. The server imports those once; each run is a
``fork()`` of it that then runs the console script exactly as ``exec`` would: the caller's
argv, environment, working directory, process group and stdin/stdout/stderr. The script
imports lighteval, huggingface_hub, datasets and transformers itself, in the child, because
those read per-run settings (``HF_HOME``, the working directory) at import time.

Faithfulness is guarded, not assumed:

* only :data:`PRELOAD_MODULES` are imported, and the server refuses every run if importing
  them pulled in a module from :data:`PER_RUN_MODULES` or looked up a per-run environment
  key (a library upgrade could);
* a run whose environment differs from the server's in anything but :data:`PER_RUN_KEYS`
  (and ``EVALJIG_*``/``PYTEST_*``) is refused, so the preloaded modules saw the same settings;
* a script that is not a Python script of this very interpreter is refused.

A refused run is started normally by the client. Usage::

    python -m evaljig_config._preload_server SOCKET [MODULE...]   # serves until stdin closes
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import re
import runpy
import selectors
import signal
import socket
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaljig_config._preload_client import receive_message, send_message

#: Imported once by the server: libraries that read no per-run setting while importing.
PRELOAD_MODULES = (
    "numpy", "pandas", "pyarrow", "scipy.stats", "sklearn.metrics", "torch", "nltk", "sympy",
    "aiohttp", "pydantic", "rich", "inspect_ai", "litellm",
)  # fmt: skip
#: Never preloaded: they read HF_HOME (and derived cache paths) or the working directory on import.
PER_RUN_MODULES = ("huggingface_hub", "datasets", "transformers", "lighteval")
#: Environment keys a run may set differently from the server: read at run time, and the server
#: refuses all runs if preloading looked one up. (pytest's terminal sets COLUMNS and LINES.)
PER_RUN_KEYS = frozenset({"HF_HOME", "OPENAI_API_KEY", "COLUMNS", "LINES"})
_PER_RUN_PREFIXES = ("EVALJIG_", "PYTEST_")


@dataclass(frozen=True)
class Job:
    """One run, as the client asked for it, with the client's stdin/stdout/stderr."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    pgid: int
    fds: list[int]


def env_differences(server: Mapping[str, str], run: Mapping[str, str]) -> list[str]:
    """Keys whose value differs between the server's environment and a run's, per-run keys aside."""
    keys = set(server) | set(run)
    return sorted(
        key
        for key in keys
        if server.get(key) != run.get(key) and key not in PER_RUN_KEYS and not key.startswith(_PER_RUN_PREFIXES)
    )


#: uv writes console scripts as a /bin/sh trampoline that execs the ``python`` beside the script.
_UV_TRAMPOLINE = re.compile(rb"""^'''exec' "\$\(dirname -- "\$\(realpath -- "\$0"\)"\)"/'([^'/]+)' "\$0" "\$@"$""")


def _interpreter_of(script: Path) -> Path | None:
    """The Python a console script runs on: its ``#!`` line, or the one uv's trampoline execs."""
    with script.open("rb") as handle:
        first, second = handle.readline(4096).strip(), handle.readline(4096).strip()
    if not first.startswith(b"#!"):
        return None
    shebang = first[2:].decode().split()
    if shebang == ["/bin/sh"]:
        trampoline = _UV_TRAMPOLINE.match(second)
        return script.resolve().parent / trampoline[1].decode() if trampoline else None
    return Path(shebang[0]) if shebang else None


def _is_script_of_this_python(path: str) -> bool:
    """True when ``path`` would run on this very interpreter of this very environment."""
    try:
        interpreter = _interpreter_of(Path(path))
        this = Path(sys.executable)
        return (
            interpreter is not None
            and interpreter.parent.resolve() == this.parent.resolve()  # the same venv, not just the same binary
            and interpreter.samefile(this)
        )
    except (OSError, UnicodeDecodeError):
        return False


def _parse_job(message: dict[str, Any], fds: list[int]) -> Job:
    argv, env, cwd, pgid = message.get("argv"), message.get("env"), message.get("cwd"), message.get("pgid")
    if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
        raise ValueError("argv: must be a non-empty list of strings")
    if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
        raise ValueError("env: must map strings to strings")
    if not isinstance(cwd, str) or not isinstance(pgid, int) or len(fds) != 3:
        raise ValueError("cwd, pgid and three descriptors are required")
    return Job(argv, env, cwd, pgid, fds)


class Server:
    """The accept loop. :meth:`serve` returns only in a forked child, with the job to run."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.pid = os.getpid()
        self.env = dict(os.environ)
        self.tainted: list[str] = []  # what preloading did that makes it unfit to share (see preload())
        self.running: dict[int, tuple[socket.socket, int]] = {}  # child pid -> (client socket, client pgid)
        self.served = self.refused = 0
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()

    def listen(self) -> None:
        self.listener.bind(self.path)
        self.listener.listen(64)

    def refusal(self, job: Job) -> str | None:
        if self.tainted:
            return f"preloading imported or looked up {', '.join(self.tainted)}, which differ per run"
        if not _is_script_of_this_python(job.argv[0]):
            return f"{job.argv[0]} is not a Python script of {sys.executable}"
        differing = env_differences(self.env, job.env)
        if differing:
            return f"the environment differs from the server's in {', '.join(differing[:5])}"  # names, never values
        return None

    def serve(self) -> Job | None:
        """Serve until stdin closes (the parent is gone) or SIGTERM; a forked child gets its job back."""
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: None)
        self._wake_w.setblocking(False)
        signal.set_wakeup_fd(self._wake_w.fileno(), warn_on_full_buffer=False)
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(self._wake_r, selectors.EVENT_READ, "signal")
        with contextlib.suppress(ValueError, OSError):  # stdin may be closed or not selectable
            self.selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "stdin")
        while True:
            for key, _ in self.selector.select():
                if key.data == "accept":
                    conn, _ = self.listener.accept()
                    self.selector.register(conn, selectors.EVENT_READ, "request")
                elif key.data == "request":
                    job = self._handle(key.fileobj)  # type: ignore[arg-type]
                    if job is not None:
                        return job
                elif self._told_to_stop(key.data):
                    return None
            self._reap()

    def _told_to_stop(self, source: str) -> bool:
        """stdin at end of file (the parent is gone), or SIGTERM; other signals only wake the loop."""
        if source == "stdin":
            return not os.read(sys.stdin.fileno(), 4096)
        with contextlib.suppress(BlockingIOError):
            return signal.SIGTERM in set(self._wake_r.recv(4096))
        return False

    def _handle(self, conn: socket.socket) -> Job | None:
        self.selector.unregister(conn)
        fds: list[int] = []
        try:
            message, fds = receive_message(conn, max_fds=3)
            if message is None:
                raise ValueError("hung up")
            job = _parse_job(message, fds)
        except (OSError, ValueError) as exc:
            _close(fds)  # a malformed request's descriptors are not kept open
            with contextlib.suppress(OSError):
                send_message(conn, {"refused": f"bad request: {exc}"})
            conn.close()
            return None
        why = self.refusal(job)
        if why is not None:
            self.refused += 1
            with contextlib.suppress(OSError):
                send_message(conn, {"refused": why})
            conn.close()
            _close(job.fds)
            return None
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            self._forget_in_child(conn)
            return job
        _close(job.fds)
        self.served += 1
        self.running[pid] = (conn, job.pgid)
        with contextlib.suppress(OSError):
            send_message(conn, {"pid": pid})
        return None

    def _forget_in_child(self, conn: socket.socket) -> None:
        """The child keeps nothing of the server: sockets closed, signal handling as at startup."""
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        self.selector.close()
        for sock in (self.listener, self._wake_r, self._wake_w, conn, *(c for c, _ in self.running.values())):
            sock.close()
        self.running.clear()
        self.pid = -1  # nothing of the server's cleanup runs in a child

    def _reap(self) -> None:
        while self.running:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn, _ = self.running.pop(pid)
            reply = (
                {"signal": os.WTERMSIG(status)}
                if os.WIFSIGNALED(status)
                else {"exit": os.waitstatus_to_exitcode(status)}
            )
            with contextlib.suppress(OSError):
                send_message(conn, reply)
            conn.close()

    def close(self) -> None:
        """Stop runs still going (their clients report it), remove the socket."""
        if os.getpid() != self.pid:
            return
        for _, pgid in self.running.values():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
        self._reap()
        with contextlib.suppress(OSError):
            Path(self.path).unlink()
        print(f"evaljig preload: {self.served} run(s) forked, {self.refused} refused", file=sys.stderr, flush=True)


def _close(fds: Sequence[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


@contextlib.contextmanager
def _recording_env_lookups() -> Iterator[set[str]]:
    """The environment keys looked up by name (``os.environ[k]``, ``os.getenv``, ``in``) inside the block.

    Reads made while scanning the whole environment (``dict(os.environ)``, ``.items()``, as tqdm
    and fsspec do for their prefixes) are not lookups: the keys an iteration yields are expected
    back once each. Best effort: it sees Python-level reads only.
    """
    looked_up: set[str] = set()
    scanned: set[str] = set()
    environ_type = type(os.environ)
    original_getitem, original_iter = environ_type.__getitem__, environ_type.__iter__

    def getitem(self: Any, key: str) -> str:
        if key in scanned:
            scanned.discard(key)
        else:
            looked_up.add(key)
        return original_getitem(self, key)

    def iterate(self: Any) -> Iterator[str]:
        scanned.clear()  # what an earlier, abandoned scan left behind is not expected any more
        for key in original_iter(self):
            scanned.add(key)
            yield key

    environ_type.__getitem__, environ_type.__iter__ = getitem, iterate  # type: ignore[method-assign]
    try:
        yield looked_up
    finally:
        environ_type.__getitem__, environ_type.__iter__ = original_getitem, original_iter  # type: ignore[method-assign]


def preload(modules: Sequence[str]) -> list[str]:
    """Import ``modules`` (a missing one is skipped); what makes them unfit to share, if anything.

    Unfit: a module of :data:`PER_RUN_MODULES` got imported, or a per-run key was looked up.
    """
    with _recording_env_lookups() as read:
        for name in modules:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
    per_run_read = sorted(key for key in read if key in PER_RUN_KEYS or key.startswith(_PER_RUN_PREFIXES))
    return [name for name in PER_RUN_MODULES if name in sys.modules] + [f"${key}" for key in per_run_read]


def become(job: Job) -> None:
    """Turn this forked child into the process ``exec`` of the script would have been, and run it."""
    try:
        os.setpgid(0, job.pgid)  # the client's group: stopping the client's group stops the run
    except OSError as exc:
        os.write(job.fds[2], f"evaljig preload: cannot join process group {job.pgid}: {exc}\n".encode())
        os._exit(70)
    os.chdir(job.cwd)
    os.environ.clear()
    os.environ.update(job.env)
    for target, fd in enumerate(job.fds):
        os.dup2(fd, target)
    _close(job.fds)
    script = job.argv[0]
    sys.argv = list(job.argv)
    sys.path[0] = str(Path(script).resolve().parent)
    runpy.run_path(script, run_name="__main__")


def main(argv: Sequence[str]) -> int:
    if not argv:
        print("usage: python -m evaljig_config._preload_server SOCKET [MODULE...]", file=sys.stderr)
        return 2
    server = Server(argv[0])
    server.listen()  # before the slow imports: clients queue up instead of falling back
    print("listening", flush=True)
    server.tainted = preload(argv[1:] or PRELOAD_MODULES)
    gc.freeze()  # preloaded objects leave the collector: children's exit would otherwise copy every page
    try:
        job = server.serve()
    finally:
        server.close()
    if job is None:
        return 0
    become(job)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
