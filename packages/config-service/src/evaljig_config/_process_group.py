"""lighteval as a child process whose whole process group ends with the run, however the run ends.

lighteval may start helpers of its own; a Ctrl-C, SIGTERM or timeout that stopped only the
direct child would leave them calling the endpoint. The child leads a new process group, and
every exit path signals that group: SIGTERM, a grace period, then SIGKILL.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from evaljig_config._errors import ConfigError

GRACE_S = 5.0
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT/SIGTERM back while cleanup runs; they are delivered (and raise) afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signum)


def stop_process_group(proc: subprocess.Popen[bytes], grace_s: float = GRACE_S) -> None:
    """End ``proc`` and every process left in its group; returns once ``proc`` is reaped."""
    if proc.poll() is None:
        _signal_group(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace_s)
    _signal_group(proc.pid, signal.SIGKILL)  # members that ignored SIGTERM or outlived the leader
    proc.wait()


def run_in_group(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout_s: float) -> int:
    """Run ``argv`` with stdout/stderr in ``cwd/stdout.txt``/``stderr.txt``; its exit code.

    Output goes to files, not pipes: an interrupted run keeps what was printed, and the caller
    scrubs it like everything else lighteval wrote.
    """
    with (cwd / "stdout.txt").open("wb") as out, (cwd / "stderr.txt").open("wb") as err:
        proc: subprocess.Popen[bytes] | None = None
        try:
            with signals_deferred():  # a signal arriving now is raised once proc is set, inside this try
                proc = subprocess.Popen(
                    list(argv),
                    cwd=cwd,
                    env=dict(env),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    process_group=0,
                )
            return proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise ConfigError(f"lighteval did not finish within {timeout_s:g} s (see {cwd}/stderr.txt)") from None
        finally:
            if proc is not None:
                with signals_deferred():
                    stop_process_group(proc)
