"""A string that matches a JSON Schema ``pattern``, for the schema-instance generator.

Why not a library: ``rstr`` (the usual choice) draws negated classes from a ``set``, so its output
changes with ``PYTHONHASHSEED`` and the gateway's answers would stop being a function of the
request; and it cannot aim at a length, which ``minLength``/``maxLength`` next to a ``pattern`` need.
This walks the parse tree of Python's own regex parser with a seeded ``random.Random``, draws
from small readable alphabets, and checks every candidate with ``re.search`` (JSON Schema
patterns are unanchored), so a returned string always matches. Look-behind, Unicode property
classes (``\\p{L}``, not Python syntax) and back-references to unset groups are not supported: the
caller gets ``None`` and says so.
"""

from __future__ import annotations

import random
import re
import string
from typing import Any

try:  # Python 3.11+; sre_parse is the deprecated alias
    import re._parser as _sre_parse  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover
    import sre_parse as _sre_parse  # type: ignore[no-redef,unused-ignore]

_PRINTABLE = string.ascii_letters + string.digits + "-_.:/@+ "
_CATEGORIES = {
    "CATEGORY_DIGIT": string.digits,
    "CATEGORY_NOT_DIGIT": string.ascii_letters + "-_ ",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": string.ascii_letters + string.digits,
    "CATEGORY_WORD": string.ascii_letters + string.digits + "_",
    "CATEGORY_NOT_WORD": "-. :/",
}
#: Extra repeats allowed past a quantifier's minimum, per attempt: the later attempts stretch toward ``minLength``.
_STRETCH = (2, 0, 1, 4, 8, 16, 32, 64)


class _UnsupportedError(Exception):
    """A regex construct this sampler does not generate."""


def sample(pattern: str, rng: random.Random, min_length: int = 0, max_length: int | None = None) -> str | None:
    """A string matching ``pattern`` (searched, as JSON Schema does) within the length bounds, or None."""
    try:
        compiled = re.compile(pattern)
        parsed = _sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return None
    for stretch in _STRETCH:
        try:
            text = _Walker(rng, stretch).seq(parsed)
        except (_UnsupportedError, IndexError, KeyError, RecursionError):
            return None
        if not compiled.search(text):
            continue
        if len(text) < min_length and not _anchored_end(parsed):
            text += _pad(rng, min_length - len(text))
        if len(text) >= min_length and (max_length is None or len(text) <= max_length) and compiled.search(text):
            return text
    return None


def _anchored_end(parsed: Any) -> bool:
    items = list(parsed)
    return bool(items) and str(items[-1][0]) == "AT" and str(items[-1][1]) in ("AT_END", "AT_END_STRING")


def _pad(rng: random.Random, count: int) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(count))


class _Walker:
    def __init__(self, rng: random.Random, stretch: int) -> None:
        self._rng = rng
        self._stretch = stretch
        self._groups: dict[int, str] = {}

    def seq(self, items: Any) -> str:
        return "".join(self.node(op, av) for op, av in items)

    def node(self, op: Any, av: Any) -> str:
        name = str(op)
        if name == "LITERAL":
            return chr(av)
        if name == "NOT_LITERAL":
            return self._rng.choice([c for c in _PRINTABLE if c != chr(av)])
        if name == "ANY":
            return self._rng.choice(string.ascii_letters)
        if name == "IN":
            return self._rng.choice(self._charset(av))
        if name == "BRANCH":
            return self.seq(self._rng.choice(av[1]))
        if name == "SUBPATTERN":
            group, body = av[0], av[-1]
            text = self.seq(body)
            if group is not None:
                self._groups[group] = text
            return text
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, body = av
            top = low + self._stretch if high == _sre_parse.MAXREPEAT else min(high, low + self._stretch)
            return "".join(self.seq(body) for _ in range(self._rng.randint(low, max(low, top))))
        if name == "GROUPREF":
            return self._groups[av]
        if name in ("AT", "ASSERT_NOT"):
            return ""  # anchors and negative look-aheads add no text; the final re.search judges
        if name == "ATOMIC_GROUP":
            return self.seq(av)
        raise _UnsupportedError(name)

    def _charset(self, items: Any) -> list[str]:
        chars: list[str] = []
        negate = False
        for op, av in items:
            name = str(op)
            if name == "NEGATE":
                negate = True
            elif name == "LITERAL":
                chars.append(chr(av))
            elif name == "RANGE":
                low, high = av
                chars.extend(chr(c) for c in range(low, min(high, low + 255) + 1))
            elif name == "CATEGORY":
                chars.extend(_CATEGORIES.get(str(av), ""))
            else:
                raise _UnsupportedError(name)
        if negate:
            banned = set(chars)
            chars = [c for c in _PRINTABLE if c not in banned]
        if not chars:
            raise _UnsupportedError("empty character class")
        return sorted(set(chars))
