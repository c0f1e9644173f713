"""The corpus loader's strict JSON reader (shared with evaljig-fixtures): evaljig-common's ``loads_strict``.

Hostile input gets a reason, never a traceback or a hang: duplicate keys, ``NaN``/``Infinity`` and
numbers that overflow to them, integers longer than ``MAX_INT_DIGITS`` digits, and nesting deeper
than ``MAX_DEPTH``. The verdicts and reasons are evaljig-common's, the same every evaljig package
gives; only the depth bound is the corpus's. Callers wrap ``JsonInputError`` in their own error type.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from evaljig_common import MAX_INT_DIGITS, EvaljigError, StrictJSONError, loads_strict

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "JsonInputError", "duplicates", "loads", "loads_bytes"]

MAX_DEPTH = 64
"""Arrays and objects nested deeper than this are refused (the corpus and packages need fewer than 10)."""


class JsonInputError(EvaljigError, ValueError):
    """The text is not JSON this reader accepts; the message is the reason, without a file name."""


def duplicates(names: Iterable[str]) -> list[str]:
    """The names that occur more than once, sorted; one hash per name, so linear in the input."""
    return sorted(name for name, count in Counter(names).items() if count > 1)


def loads(text: str) -> Any:
    """Parse ``text``; raise ``JsonInputError`` with the reason for anything this reader refuses."""
    return loads_bytes(text)


def loads_bytes(data: bytes | str) -> Any:
    """``loads`` for UTF-8 bytes (or text); a decoding error is a ``JsonInputError`` too."""
    try:
        return loads_strict(data, max_depth=MAX_DEPTH)
    except StrictJSONError as exc:
        raise JsonInputError(f"{exc.reason}{exc.where}") from None
