"""Run the builders in a child process that leads its own process group, and stop that group at a deadline.

A builder is arbitrary code (a team's own, or one that starts lighteval and a gateway); one that
hangs must not hang regen, nor leave its helpers running. So the builders of one regen run in a
forked child (it inherits them and the ``BuildContext`` as they are: nothing is pickled), one at
a time when regen asks, writing into the staging folder and reporting the paths each returned
through a pipe; the child keeps what it imported from one builder to the next. When a builder
passes its deadline (``regen --timeout``) the group gets SIGTERM, which the child turns into an
exception so its cleanup runs (a gateway stops, lighteval's own group is stopped), then, after a
grace period, SIGKILL for whatever is left; the next builder gets a new child. A process that
started a session of its own is out of reach; lighteval, started by evaljig_config, is stopped by
the child's cleanup.

Where ``os.fork`` does not exist (Windows) the builders run in this process, without a deadline.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from evaljig_fixtures._errors import BuildError
from evaljig_fixtures._regen_builder import BuildContext, Builder

DEFAULT_TIMEOUT_S = 1800.0
"""One builder's deadline: a real lighteval run is ~15 s, recording a large dataset from a remote model minutes."""
GRACE_S = 10.0
"""After SIGTERM, how long the group has to clean up (evaljig_config gives lighteval 5 s of its own)."""
_CHUNK = 65536
_STOPPED = "stopped (SIGTERM)"


class _Stopped(BaseException):
    """SIGTERM in the builders' child: unwinds the builder so its ``finally`` blocks and context managers run."""


class BuilderFailedError(BuildError):
    """The builder raised; the message is what regen prints for it (``BuildError`` text, or ``Type: text``)."""


class BuilderProcess:
    """``run(index, timeout_s)`` builds ``builders[index]`` in the child (started on first use); ``close()`` ends it."""

    def __init__(self, builders: Sequence[Builder], ctx: BuildContext) -> None:
        self.builders = tuple(builders)
        self.ctx = ctx
        self._child: tuple[int, int, int] | None = None  # pid, command pipe (write end), result pipe (read end)

    def __enter__(self) -> BuilderProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, index: int, timeout_s: float | None) -> list[Path]:
        """The paths ``builders[index].build(ctx.staging, ctx)`` returned; ``BuildError`` naming why not."""
        builder = self.builders[index]
        if not hasattr(os, "fork"):
            return [Path(os.fspath(p)) for p in builder.build(self.ctx.staging, self.ctx)]
        _pid, commands, results = self._child or self._start()
        try:
            os.write(commands, f"{index}\n".encode("ascii"))
            line, finished = _read_line(results, None if timeout_s is None else time.monotonic() + timeout_s)
        except BaseException:
            self._stop()  # Ctrl-C reaches only regen's own process group: the builders' group is stopped here
            raise
        if not finished:
            self._stop()
            raise BuildError(
                f"builder {builder.name}: did not finish within {timeout_s:g} s (--timeout): stopped it and every "
                "process of its group"
            )
        if not line:
            status = self._stop()
            code = os.waitstatus_to_exitcode(status) if status is not None else 0
            how = f"killed by signal {-code}" if code < 0 else f"exit {code}"
            raise BuildError(f"builder {builder.name}: its process ended without a result ({how})")
        result: dict[str, Any] = json.loads(line)
        if "error" in result:
            if result["error"] == _STOPPED:
                self._stop()
            raise BuilderFailedError(str(result["error"]))
        return [Path(p) for p in result["returned"]]

    def close(self) -> None:
        """Let the child finish (end of its commands), then end any process left in its group."""
        if self._child is None:
            return
        pid, commands, results = self._child
        self._child = None
        os.close(commands)  # EOF on its commands: the child exits
        try:
            deadline = time.monotonic() + GRACE_S
            exited = _read_until_eof(results, deadline)
            _end_group(pid, exited=exited, deadline=deadline)
        finally:
            os.close(results)

    def _start(self) -> tuple[int, int, int]:
        command_read, command_write = os.pipe()
        result_read, result_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - measured by coverage's fork patch in the child, not in this process
            os.close(command_write)
            os.close(result_read)
            _serve(self.builders, self.ctx, command_read, result_write)
        os.close(command_read)
        os.close(result_write)
        with contextlib.suppress(OSError):  # the child does the same: whichever runs first, the group exists
            os.setpgid(pid, pid)
        self._child = (pid, command_write, result_read)
        return self._child

    def _stop(self) -> int | None:
        """SIGTERM to the group, up to ``GRACE_S`` for the child to clean up, then SIGKILL; the child's wait status."""
        if self._child is None:
            return None
        pid, commands, results = self._child
        self._child = None
        try:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGTERM)
            deadline = time.monotonic() + GRACE_S
            exited = _read_until_eof(results, deadline)
            return _end_group(pid, exited=exited, deadline=deadline)
        finally:
            os.close(commands)
            os.close(results)


def _end_group(pid: int, *, exited: bool, deadline: float) -> int | None:
    """SIGKILL whatever is left in the group, then reap its leader (the child); the child's wait status.

    The group is signalled while the leader is still unreaped, so its id cannot have been reused
    by an unrelated group. A child that ``exited`` (it closed its pipe) is first given until
    ``deadline`` to finish exiting (coverage, under test, saves its data then), unreaped.
    """
    if exited and hasattr(os, "waitid"):
        with contextlib.suppress(ChildProcessError):
            while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is None:
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.01)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        return os.waitpid(pid, 0)[1]
    return None


def _serve(builders: Sequence[Builder], ctx: BuildContext, commands: int, results: int) -> NoReturn:
    """The forked child: build what the parent asks for, report each result, leave by ``os._exit``.

    Never returns into the caller's code (under pytest that would run the rest of the test twice).
    """
    code = 0
    try:
        os.setpgid(0, 0)
        signal.signal(signal.SIGTERM, _raise_stopped)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with os.fdopen(commands, "rb") as requests, os.fdopen(results, "wb", buffering=0) as replies:
            for request in requests:
                reply, stop = _build_one(builders[int(request)], ctx)
                replies.write(json.dumps(reply).encode("utf-8") + b"\n")
                if stop:
                    break
    except BaseException:
        code = 70
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _build_one(builder: Builder, ctx: BuildContext) -> tuple[dict[str, Any], bool]:
    try:
        return {"returned": [os.fspath(p) for p in builder.build(ctx.staging, ctx)]}, False
    except _Stopped:
        return {"error": _STOPPED}, True
    except BaseException as exc:  # reported by the parent as this builder's failure
        detail = str(exc) if isinstance(exc, BuildError) else f"{type(exc).__name__}: {exc}"
        return {"error": detail}, isinstance(exc, KeyboardInterrupt)


def _raise_stopped(signum: int, frame: object) -> None:
    raise _Stopped


def _readable(fd: int, timeout: float | None) -> bool:
    """Whether ``fd`` has data (or EOF) within ``timeout`` seconds (``None``: wait); any fd number (not select())."""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        return bool(selector.select(timeout))


def _read_line(fd: int, deadline: float | None) -> tuple[bytes, bool]:
    """The reply line (``b""`` at EOF: the child exited); ``False`` when the deadline came first.

    One reply is in flight at a time (the child waits for the next command), so whole chunks are read.
    """
    data = b""
    while not data.endswith(b"\n"):
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not _readable(fd, wait):
            return data, False
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return b"", True
        data += chunk
    return data, True


def _read_until_eof(fd: int, deadline: float) -> bool:
    """Drain the pipe until the child closes it (``True``: it is exiting) or the deadline passes (``False``)."""
    with contextlib.suppress(OSError):
        while True:
            if not _readable(fd, max(0.0, deadline - time.monotonic())):
                return False
            if not os.read(fd, _CHUNK):
                return True
    return False
