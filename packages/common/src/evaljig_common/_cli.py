"""One line on stderr, not a traceback, when a command-line tool cannot write its output."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable
from typing import ParamSpec

_P = ParamSpec("_P")


def one_line_errors(prog: str, exit_code: int = 2) -> Callable[[Callable[_P, int]], Callable[_P, int]]:
    """Decorate a ``main`` returning an exit code: an ``OSError`` escaping it becomes one line and ``exit_code``.

    An output that cannot be written (a folder, a path under a file, read-only, a full disk,
    stdout to /dev/full) prints ``<prog>: <file or "output">: <reason>`` on stderr. stdout is
    flushed inside the guard, so a failing final flush is caught too, then pointed at
    /dev/null so the interpreter does not fail again on it at exit.
    """

    def decorate(main: Callable[_P, int]) -> Callable[_P, int]:
        @functools.wraps(main)
        def guarded(*args: _P.args, **kwargs: _P.kwargs) -> int:
            try:
                code = main(*args, **kwargs)
                sys.stdout.flush()
            except OSError as exc:
                with contextlib.suppress(OSError):
                    _silence_stdout()
                where = exc.filename if exc.filename is not None else "output"
                print(f"{prog}: {where}: {exc.strerror or exc}", file=sys.stderr)
                return exit_code
            return code

        return guarded

    return decorate


def _silence_stdout() -> None:
    """Point stdout's file descriptor at /dev/null, so what is still buffered flushes harmlessly at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
