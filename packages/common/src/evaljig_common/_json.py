"""One strict JSON reader for files evaljig did not necessarily write itself (case files, merge inputs).

JSON readers disagree on what a document means when it repeats a key (Python's ``json`` and orjson
keep the last one, others the first), so a file that says ``"status": "fail", "status": "pass"`` can
mean two things: it is refused. So is nesting deeper than a bound: whatever reads the value next
(a recursive walk, orjson's 255-level encoder, a template) must not be the one to give up, with a
traceback, on a file that is valid JSON. ``NaN`` and ``Infinity`` are not JSON and are refused too.
Nothing here recurses in Python: the depth is checked with an explicit stack.
"""

from __future__ import annotations

import json
from typing import Any

from evaljig_common._errors import EvaljigError

#: Nesting a JSON value may have by default (the document itself is level 1).
MAX_JSON_DEPTH = 100


class StrictJSONError(EvaljigError, ValueError):
    """A document :func:`loads_strict` refuses: not JSON, a repeated key, or nested too deep.

    ``reason`` is the problem alone and ``line`` where the parser stopped (None when it is not known),
    so a caller can name its own file: ``f"{path}: invalid JSON{where}: {reason}"``.
    """

    def __init__(self, reason: str, line: int | None = None) -> None:
        self.reason = reason
        self.line = line
        super().__init__(f"at line {line}: {reason}" if line is not None else reason)

    @property
    def where(self) -> str:
        """`` at line N`` when the line is known, else empty."""
        return f" at line {self.line}" if self.line is not None else ""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise StrictJSONError(f"duplicate key {key!r}")
            seen.add(key)
    return obj


def _not_json(constant: str) -> Any:
    raise StrictJSONError(f"{constant} is not a JSON number")


_DECODER = json.JSONDecoder(object_pairs_hook=_unique, parse_constant=_not_json)


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
