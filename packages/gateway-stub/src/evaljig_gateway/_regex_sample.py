"""A string that matches a JSON Schema ``pattern``, built from the parsed pattern so it matches by construction.

Why by construction: checking candidates with ``re.search`` runs a backtracking engine on text
the request shapes, and one pattern (``^(?!(x+x+)+y)(x+x+)+$`` with ``minLength: 60``) held the
gateway for good. So no regex engine ever runs here: the pattern is parsed by Python's own
parser (``re._parser``) and its tree walked with a seeded ``random.Random``; each node emits text
that node matches (a literal, a member of a class, ``n`` copies of a repeated body with ``n``
within the quantifier's bounds, one branch of an alternation, what a group captured for a
back-reference), so the concatenation is in the pattern's language, and a backtracking engine,
which tries every path, finds the match. ``^``/``$``/``\\A``/``\\Z`` are honoured by position (an
attempt that would put text before ``^`` or after ``$`` is dropped and another is drawn).

What cannot be built that way is refused with :class:`RegexError` naming the construct, before
any text is made: look-ahead and look-behind, conditional groups, atomic groups and possessive
quantifiers (they make a path's text fail to match), and word boundaries (``\\b``, ``\\B``).

Every node visited and character emitted spends a step of the request's
:class:`~evaljig_gateway._limits.OutputBudget` as it happens, and no attempt may emit more than the
characters left in it (the caller spends those for the string it keeps), so nested repeats
(``(a{3000}){3000}``) stop at the budget, never after.

Why not a library: ``rstr`` draws negated classes from a ``set`` (output changes with
``PYTHONHASHSEED``), checks nothing, and cannot aim at a length, which ``minLength``/``maxLength``
beside a ``pattern`` need.
"""

from __future__ import annotations

import functools
import random
import re
import re._parser as _sre_parse  # type: ignore[import-not-found,unused-ignore]  # typeshed stubs only sre_parse
import string
from collections.abc import Callable
from typing import Any

from evaljig_gateway._limits import BudgetExceededError, OutputBudget

__all__ = ["MAX_GROUP_DEPTH", "MAX_PATTERN_CHARS", "RegexError", "sample"]

#: Longer patterns are refused: parsing is pure Python (microseconds a character); eval schemas' are short.
MAX_PATTERN_CHARS = 1024
#: Steps of the request's budget one call costs before any node is walked.
SAMPLE_STEPS = 10
#: Groups nested deeper than this are refused (the walk is recursive).
MAX_GROUP_DEPTH = 64

_PRINTABLE = string.ascii_letters + string.digits + "-_.:/@+ "
#: Characters with no case: what a negated class draws from under IGNORECASE (a letter's other case may be banned).
_CASELESS = string.digits + "-_.:/@+ "
#: What each category draws from; a positive category's pool is also every printable ASCII character it holds.
_CATEGORY_POOLS = {
    "CATEGORY_DIGIT": string.digits,
    "CATEGORY_NOT_DIGIT": string.ascii_letters + "-_ ",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": string.ascii_letters + string.digits,
    "CATEGORY_WORD": string.ascii_letters + string.digits + "_",
    "CATEGORY_NOT_WORD": "-. :/",
}
_UNSUPPORTED = {
    "GROUPREF_EXISTS": "conditional groups '(?(1)...)' are not supported",
    "ATOMIC_GROUP": "atomic groups '(?>...)' are not supported",
    "POSSESSIVE_REPEAT": "possessive quantifiers ('*+', '++', '?+') are not supported",
}
_IGNORECASE = int(re.IGNORECASE)  # a plain int: flag arithmetic on the enum costs microseconds
_REPEATS = ("MAX_REPEAT", "MIN_REPEAT")
_ONE_CHAR = ("LITERAL", "NOT_LITERAL", "ANY", "IN")
#: Extra repeats allowed past a quantifier's minimum, per attempt: later attempts stretch toward ``minLength``.
_STRETCH = (2, 0, 1, 4, 8, 16, 32, 64)


class RegexError(ValueError):
    """A pattern this sampler refuses or cannot meet; the message says why (no schema path: the caller adds it)."""


class _DeadEndError(Exception):
    """This attempt's choices cannot match (text before ``^``, after ``$``, a back-reference to an unset group)."""


class _TooLongError(Exception):
    """This attempt emitted more than it may (``maxLength`` or the budget)."""


def sample(
    pattern: str,
    rng: random.Random,
    budget: OutputBudget,
    min_length: int = 0,
    max_length: int | None = None,
    parsed_cache: dict[str, Any] | None = None,
) -> str:
    """A string matching ``pattern`` (searched, as JSON Schema does) with a length in the bounds.

    :class:`RegexError` when the pattern is refused or no such string was found;
    :class:`BudgetExceededError` when even the shortest attempt needs more than ``budget`` holds.
    ``min_length`` is at most ``max_length`` and the characters left in ``budget`` (the caller refuses a
    ``minLength`` above either before drawing: ``_schema_instance`` does; a grammar asks for none).
    ``parsed_cache`` keeps parse trees between calls for one request (an array of patterned strings).
    """
    budget.spend_steps(SAMPLE_STEPS)
    cache = parsed_cache if parsed_cache is not None else {}
    parsed = cache.get(pattern)
    if parsed is None:
        parsed = cache[pattern] = parse(pattern, budget)
    room = budget.chars_left
    cap = room if max_length is None else min(max_length, room)
    shortest = _shortest(parsed)
    if shortest > cap:
        if cap < room:  # maxLength is the cap, not the budget
            raise RegexError(f"its shortest match has {shortest:,} characters, more than maxLength {max_length}")
        raise BudgetExceededError(
            f"its shortest match has {shortest:,} characters, more than the {room:,} left to generate "
            "(evaljig-gateway serve --max-generated-chars)"
        )
    too_long = too_short = 0
    for stretch in _STRETCH:
        walker = _Walker(rng, stretch, budget, cap)
        try:
            text = walker.run(parsed)
        except _DeadEndError:
            continue
        except _TooLongError:
            too_long += 1
            if stretch == 0:
                break  # the fewest repeats were too long already: more cannot help
            continue
        if len(text) < min_length:
            if not walker.ended:
                text += _pad(rng, min_length - len(text), budget)
            elif not walker.began:
                text = _pad(rng, min_length - len(text), budget) + text
            else:
                too_short += 1
                continue
        return text
    if too_long and cap < room:
        raise RegexError(f"no string of at most maxLength {max_length} characters matches it")
    if too_long:
        raise BudgetExceededError(f"it needs more than the {room:,} characters left to generate")
    if too_short:
        raise RegexError(f"no string of at least minLength {min_length} characters was found for it")
    raise RegexError("its anchors or back-references cannot be met")


def parse(pattern: str, budget: OutputBudget) -> Any:
    """The pattern's parse tree, checked for what the walker supports; :class:`RegexError` naming the refusal.

    Spends a step per pattern character and per node whether or not the parse was cached (the
    answer must not depend on what earlier requests left in the cache).
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        raise RegexError(f"patterns longer than {MAX_PATTERN_CHARS} characters are not supported")
    budget.spend_steps(len(pattern))
    parsed, nodes, refusal = _parsed(pattern)
    budget.spend_steps(nodes)
    if refusal is not None:
        raise RegexError(refusal)
    return parsed


@functools.lru_cache(maxsize=512)
def _parsed(pattern: str) -> tuple[Any, int, str | None]:
    """(tree, nodes checked, why it is refused or None), the tree None when the pattern does not parse; the tree is
    never mutated."""
    try:
        parsed = _sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError) as exc:
        return None, 0, f"not a valid regular expression: {exc}"
    return (parsed, *_refusal(parsed))


def _refusal(parsed: Any) -> tuple[int, str | None]:
    """(nodes checked, why ``parsed`` cannot be generated by construction or None): what is refused whatever branch
    a walk would take (an explicit stack)."""
    nodes = 0
    stack: list[tuple[Any, int]] = [(parsed, 0)]
    while stack:
        items, depth = stack.pop()
        if depth > MAX_GROUP_DEPTH:
            return nodes, f"groups nested deeper than {MAX_GROUP_DEPTH} levels are not supported"
        for op, av in items:
            nodes += 1
            name = str(op)
            if name in _UNSUPPORTED:
                return nodes, _UNSUPPORTED[name]
            if name in ("ASSERT", "ASSERT_NOT"):
                return nodes, f"{'look-behind' if av[0] < 0 else 'look-ahead'} is not supported"
            if name == "AT" and str(av) in ("AT_BOUNDARY", "AT_NON_BOUNDARY"):
                return nodes, "word boundaries ('\\b', '\\B') are not supported"
            if name == "BRANCH":
                stack.extend((branch, depth + 1) for branch in av[1])
            elif name == "SUBPATTERN":
                stack.append((av[-1], depth + 1))
            elif name in _REPEATS:
                stack.append((av[2], depth + 1))
            # a class (IN) holds only what re's parser makes of one: NEGATE, LITERAL, RANGE and the CATEGORY of
            # \d \D \s \S \w \W, each of which the walker draws from
            elif name not in ("LITERAL", "NOT_LITERAL", "ANY", "IN", "AT", "GROUPREF"):
                return nodes, f"the construct {name} is not supported"
    return nodes, None


def _shortest(items: Any, captured: dict[int, str] | None = None) -> int:
    """The fewest characters a match of ``items`` has: refuses early, and tells a walk whether a repeat's body
    can match empty. A back-reference counts as its group's ``captured`` text (what a walk drew for it), else as
    the fewest characters the group can match (the parser's ``groupwidths``)."""
    total = 0
    for op, av in items:
        name = str(op)
        if name in _ONE_CHAR:
            total += 1
        elif name == "BRANCH":
            total += min(_shortest(branch, captured) for branch in av[1])
        elif name == "SUBPATTERN":
            total += _shortest(av[-1], captured)
        elif name in _REPEATS:
            total += av[0] * _shortest(av[2], captured)
        elif name == "GROUPREF":
            total += len(captured[av]) if captured and av in captured else items.state.groupwidths[av][0]
    return total


def _pad(rng: random.Random, count: int, budget: OutputBudget) -> str:
    budget.spend_steps(count)
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(count))


class _Walker:
    """One attempt: text for the tree, ``stretch`` extra repeats at most past each quantifier's minimum."""

    def __init__(self, rng: random.Random, stretch: int, budget: OutputBudget, cap: int) -> None:
        self._rng = rng
        self._stretch = stretch
        self._budget = budget
        self._cap = cap
        self._out: list[str] = []
        self._length = 0
        self.ended = False
        """Whether a ``$``/``\\Z`` was met: text may not be appended."""
        self.began = False
        """Whether a ``^``/``\\A`` was met: text may not be prepended."""
        self._groups: dict[int, str] = {}
        self._ignore_case = [False]
        self._allowed: dict[tuple[str, int, bool], str] = {}
        """Character pools of ``NOT_LITERAL`` and ``IN`` nodes, by node and IGNORECASE."""

    def run(self, parsed: Any) -> str:
        self._ignore_case = [bool(parsed.state.flags & _IGNORECASE)]
        self._seq(parsed)
        return "".join(self._out)

    def _emit(self, text: str) -> None:
        if not text:
            return
        if self.ended:
            raise _DeadEndError  # text after '$'
        self._length += len(text)
        if self._length > self._cap:
            raise _TooLongError
        self._out.append(text)

    def _seq(self, items: Any) -> None:
        for op, av in items:
            self._node(str(op), av)

    def _node(self, name: str, av: Any) -> None:
        self._budget.spend_steps(2)
        if name in _ONE_CHAR:
            pool = self._pool(name, av)
            self._emit(pool if len(pool) == 1 else self._rng.choice(pool))
        elif name == "BRANCH":
            self._seq(self._rng.choice(av[1]))
        elif name == "SUBPATTERN":
            self._group(av)
        elif name in _REPEATS:
            self._repeat(*av)
        elif name == "GROUPREF":
            if av not in self._groups:
                raise _DeadEndError  # the group took no part in this attempt
            self._emit(self._groups[av])
        elif str(av) in ("AT_BEGINNING", "AT_BEGINNING_STRING"):  # AT: _refusal refused every other construct
            if self._length:
                raise _DeadEndError  # '^' after text
            self.began = True
        else:  # AT_END, AT_END_STRING: the word boundaries are refused too
            self.ended = True

    def _repeat(self, low: int, high: int, body: Any) -> None:
        if low and _shortest(body, self._groups) == 0:
            low = 0  # a body that can match empty: fewer copies match too (the rest match empty)
        count = self._rng.randint(low, min(high, low + self._stretch))  # the parser refuses a maximum below the minimum
        if len(body) == 1 and str(body[0][0]) in _ONE_CHAR:  # a[3000], [^x]{30000}: drawn at once
            if self._length + count > self._cap:
                raise _TooLongError
            self._budget.spend_steps(1 + count // 8)
            pool = self._pool(str(body[0][0]), body[0][1])
            self._emit("".join(self._rng.choices(pool, k=count)) if len(pool) > 1 else pool * count)
            return
        for _ in range(count):
            self._budget.spend_steps(1)
            self._seq(body)

    def _pool(self, name: str, av: Any) -> str:
        """The characters one ``LITERAL``/``NOT_LITERAL``/``ANY``/``IN`` node draws from (a class's: its
        members' printable characters, or one character of a range with none)."""
        if name == "LITERAL":
            return _char(av)
        if name == "ANY":
            return string.ascii_letters
        key = (name, id(av), self._ignore_case[-1])  # the parse tree outlives the walk: ids stay unique
        if key not in self._allowed:
            self._allowed[key] = self._class_pool(name, av)
        return self._allowed[key]

    def _class_pool(self, name: str, av: Any) -> str:
        """What a ``NOT_LITERAL`` or negated class allows, or the characters of a class's members."""
        if name == "NOT_LITERAL":
            return self._allowed_chars(lambda c: c == chr(av))
        if av and str(av[0][0]) == "NEGATE":
            return self._allowed_chars(lambda c: _in_class(c, av[1:]))
        return "".join(sorted({c for item in av for c in _item_pool(*item)}))

    def _group(self, av: Any) -> None:
        group, add_flags, del_flags, body = av
        # IGNORECASE as the enclosing group has it, unless (?i:...) turns it on or (?-i:...) off
        on = self._ignore_case[-1] or bool(add_flags & _IGNORECASE)
        self._ignore_case.append(on and not del_flags & _IGNORECASE)
        start = len(self._out)
        self._seq(body)  # a walk that raises is dropped whole (sample draws anew): nothing to restore
        self._ignore_case.pop()
        if group is not None:
            self._groups[group] = "".join(self._out[start:])

    def _allowed_chars(self, banned: Callable[[str], bool]) -> str:
        """A character the class does not hold; under IGNORECASE one with no case, so no other case is banned."""
        pool = _CASELESS if self._ignore_case[-1] else _PRINTABLE
        allowed = "".join(c for c in pool if not banned(c))
        if not allowed:
            allowed = "".join(chr(code) for code in range(0x21, 0x7F) if not banned(chr(code)))
            if self._ignore_case[-1]:
                allowed = "".join(c for c in allowed if c.lower() == c.upper())
        if not allowed:
            raise _DeadEndError
        return allowed


def _char(code: int) -> str:
    if 0xD800 <= code <= 0xDFFF:
        raise _DeadEndError  # a lone surrogate: JSON text cannot carry it
    return chr(code)


def _item_pool(op: Any, av: Any) -> str:
    """The characters a class member draws from: a literal, a range's printable ones (or its first character),
    a category's pool."""
    name = str(op)
    if name == "LITERAL":
        return _char(av)
    if name == "RANGE":
        printable = "".join(c for c in _PRINTABLE if av[0] <= ord(c) <= av[1])
        if printable:
            return printable
        return _char(min(av[1], 0xE000) if 0xD800 <= av[0] <= 0xDFFF else av[0])  # the first that is no surrogate
    return _CATEGORY_POOLS[str(av)]


def _in_class(char: str, items: Any) -> bool:
    """Whether the class ``items`` holds ``char``, one of the characters a negated class is drawn from (printable
    ASCII, no white space but ' '): of those, a category holds just its pool's and a negated one all the others."""
    for op, av in items:
        name = str(op)
        if name == "LITERAL" and char == chr(av):
            return True
        if name == "RANGE" and av[0] <= ord(char) <= av[1]:
            return True
        if name == "CATEGORY":
            category = str(av)
            negated = "_NOT_" in category
            if (char in _CATEGORY_POOLS[category.replace("_NOT_", "_")]) != negated:
                return True
    return False
