"""One strict JSON reader for the corpus loader, shared with evaljig-fixtures (dataset packages and sources).

Hostile input gets a reason, never a traceback or a hang: duplicate keys (found in linear time),
``NaN``/``Infinity`` and numbers that overflow to them, integers longer than ``MAX_INT_DIGITS``
digits, and nesting deeper than ``MAX_DEPTH``. Callers wrap ``JsonInputError`` in their own error type.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

from evaljig_common import EvaljigError

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "JsonInputError", "duplicates", "loads", "loads_bytes"]

MAX_DEPTH = 64
"""Arrays and objects nested deeper than this are refused (the corpus and packages need fewer than 10)."""
MAX_INT_DIGITS = 4300
"""Python's default ``int`` string limit, enforced here whatever ``sys.set_int_max_str_digits`` says."""


class JsonInputError(EvaljigError, ValueError):
    """The text is not JSON this reader accepts; the message is the reason, without a file name."""


def duplicates(names: Iterable[str]) -> list[str]:
    """The names that occur more than once, sorted; one hash per name, so linear in the input."""
    return sorted(name for name, count in Counter(names).items() if count > 1)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    repeated = duplicates(key for key, _ in pairs)
    if repeated:
        shown = ", ".join(map(repr, repeated[:5])) + (f" and {len(repeated) - 5} more" if len(repeated) > 5 else "")
        raise JsonInputError(f"duplicate key(s) {shown}")
    return dict(pairs)


def _no_constant(token: str) -> Any:
    raise JsonInputError(f"{token} is not JSON")


def _integer(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise JsonInputError(f"integer with {digits} digits, more than the {MAX_INT_DIGITS} allowed")
    return int(text)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonInputError(f"number {text[:20]}{'...' if len(text) > 20 else ''} overflows a float")
    return value


def _too_deep(value: Any) -> bool:
    """Whether ``value`` nests deeper than ``MAX_DEPTH``; iterative, so it never recurses itself."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, dict | list):
                if depth + 1 > MAX_DEPTH:
                    return True
                stack.append((child, depth + 1))
    return False


def loads(text: str) -> Any:
    """Parse ``text``; raise ``JsonInputError`` with the reason for anything this reader refuses."""
    try:
        value = json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_no_constant,
            parse_int=_integer,
            parse_float=_finite,
        )
    except RecursionError:
        raise JsonInputError(f"nested deeper than {MAX_DEPTH} levels") from None
    except JsonInputError:
        raise
    except ValueError as exc:  # json.JSONDecodeError, or int()/float() refusing a literal
        raise JsonInputError(str(exc)) from None
    if _too_deep(value):
        raise JsonInputError(f"nested deeper than {MAX_DEPTH} levels")
    return value


def loads_bytes(data: bytes) -> Any:
    """``loads`` for UTF-8 bytes; a decoding error is a ``JsonInputError`` too."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonInputError(f"not UTF-8: {exc}") from None
    return loads(text)
