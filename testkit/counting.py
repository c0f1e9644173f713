"""Show an algorithm linear by counting the comparisons it makes, never by timing it."""

from __future__ import annotations

from collections.abc import Callable


def counting_str() -> tuple[type[str], Callable[[], int]]:
    """A ``str`` subclass counting its ``==`` calls, and a reader of the count (per call, no global)."""
    count = 0

    class Counted(str):
        __hash__ = str.__hash__

        def __eq__(self, other: object) -> bool:
            nonlocal count
            count += 1
            return str.__eq__(self, other)

    return Counted, lambda: count
