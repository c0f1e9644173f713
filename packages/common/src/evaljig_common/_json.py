"""One strict JSON reader for files evaljig did not necessarily write itself (case files, merge inputs).

JSON readers disagree on what a document means when it repeats a key (Python's ``json`` and orjson
keep the last one, others the first), so a file that says ``"status": "fail", "status": "pass"`` can
mean two things: it is refused. So is nesting deeper than a bound: whatever reads the value next
(a recursive walk, orjson's 255-level encoder, a template) must not be the one to give up, with a
traceback, on a file that is valid JSON. ``NaN`` and ``Infinity`` are not JSON and are refused too,
as are numbers that overflow to them (``1e999``) and integers longer than ``MAX_INT_DIGITS`` digits
(whatever ``sys.set_int_max_str_digits`` says). Nothing here recurses in Python: the depth is
checked with an explicit stack.

It is the one strict reader: the corpus loader, dataset packages, provider specs, case files,
merge inputs and the conformance checks of a model's JSON all read through it, so a document
gets the same verdict from every evaljig package (only the depth bound is the caller's).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

from evaljig_common._errors import EvaljigError

#: Nesting a JSON value may have by default (the document itself is level 1).
MAX_JSON_DEPTH = 100
#: Python's default ``int`` string limit, enforced here whatever the interpreter is set to.
MAX_INT_DIGITS = 4300


class StrictJSONError(EvaljigError, ValueError):
    """A document :func:`loads_strict` refuses: not JSON, a repeated key, or nested too deep.

    ``reason`` is the problem alone and ``line`` where the parser stopped (None when it is not known),
    so a caller can name its own file: ``f"{path}: invalid JSON{where}: {reason}"``.
    """

    def __init__(self, reason: str, line: int | None = None, key: str | None = None) -> None:
        self.reason = reason
        self.line = line
        self.key = key
        """The repeated key, for a duplicate (so a caller can name the field)."""
        super().__init__(f"at line {line}: {reason}" if line is not None else reason)

    @property
    def where(self) -> str:
        """`` at line N`` when the line is known, else empty."""
        return f" at line {self.line}" if self.line is not None else ""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):  # linear: one count per key, every repeated key named (sorted, the first five)
        repeated = sorted(key for key, count in Counter(key for key, _ in pairs).items() if count > 1)
        shown = ", ".join(map(repr, repeated[:5])) + (f" and {len(repeated) - 5} more" if len(repeated) > 5 else "")
        raise StrictJSONError(f"duplicate key{'s' if len(repeated) > 1 else ''} {shown}", key=repeated[0])
    return obj


def _not_json(constant: str) -> Any:
    raise StrictJSONError(f"{constant} is not a JSON number")


def _integer(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise StrictJSONError(f"integer with {digits} digits, more than the {MAX_INT_DIGITS} allowed")
    return int(text)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise StrictJSONError(f"number {text[:20]}{'...' if len(text) > 20 else ''} overflows a float")
    return value


_DECODER = json.JSONDecoder(
    object_pairs_hook=_unique, parse_constant=_not_json, parse_int=_integer, parse_float=_finite
)


def loads_strict(data: bytes | str, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse ``data`` (UTF-8 bytes or text); :class:`StrictJSONError` for a repeated key or nesting over ``max_depth``.

    Never a ``RecursionError``: a document too deep for the C parser is reported as too deep.
    """
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value = _DECODER.decode(text)
    except UnicodeDecodeError as exc:
        raise StrictJSONError(f"not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise StrictJSONError(exc.msg, exc.lineno) from None
    except RecursionError:
        raise StrictJSONError(f"nested deeper than {max_depth} levels") from None
    if depth_exceeds(value, max_depth):
        raise StrictJSONError(f"nested deeper than {max_depth} levels")
    return value


def depth_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and objects more than ``limit`` levels deep (an explicit stack: no recursion)."""
    if not isinstance(value, dict | list):
        return False
    if limit < 1:
        return True
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, dict | list):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False
