"""Work that gives the event loop back: CPU-heavy answers are generators that yield between steps.

A handler that may be expensive (thousands of vectors, a multi-megabyte prompt) is written as
a generator: it ``yield``s after each bounded step and ``return``s its result. The server
drives it a slice at a time so other clients are answered in between; tests and plain calls
run it to the end with ``drain``.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TypeVar

T = TypeVar("T")

#: A step-wise computation of a ``T``: each ``yield`` is a point where other work may run.
Work = Generator[None, None, T]


def drain(work: Work[T]) -> T:
    """Run ``work`` to the end without yielding to anyone."""
    while True:
        try:
            next(work)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
