"""The pattern sampler: strings built from the parsed pattern match it by construction, and what cannot be
built that way (look-arounds, atomic groups...) is refused with the construct named, before any text is made.

The tests check matches with ``re`` on patterns they draw themselves (small, no nested unbounded
repeats over overlapping text), which is the one place a backtracking engine may run.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaljig_gateway._limits import BudgetExceededError, OutputBudget
from evaljig_gateway._regex_sample import RegexError, sample
from evaljig_gateway._schema_instance import instance_for


def _budget(chars: int = 32 * 1024, steps: int = 25_000) -> OutputBudget:
    return OutputBudget(chars, steps)


def _atoms() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(list("abcXYZ019-. _")).map(re.escape),
        st.sampled_from(
            ["[a-c]", "[^abc]", "[A-Z0-9_]", "[^\\s]", "[^\\d\\W]", "\\d", "\\w", "\\s", "\\D", "\\W", "."]
        ),
        st.sampled_from(["[\\-x]", "[é-ü]", "[^a-zA-Z0-9]"]),
    )


def _extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    quantifier = st.sampled_from(["*", "+", "?", "*?", "+?", "{2}", "{0,3}", "{1,}", "{2,4}?"])
    return st.one_of(
        st.lists(inner, min_size=2, max_size=4).map("".join),
        st.lists(inner, min_size=2, max_size=3).map(lambda parts: "(?:" + "|".join(parts) + ")"),
        inner.map(lambda p: f"(?:{p})"),
        st.tuples(inner, quantifier).map(lambda pq: f"(?:{pq[0]}){pq[1]}"),
    )


#: How a drawn body may be referred back to after its capture: once, or repeated (a repeated back-reference is
#: as long as what the group captured, never empty unless the capture is).
BACK_REFERENCES = ["-\\1", "(?:\\1){3}", "(?:-\\1)+", "(?:\\1){0,2}x"]
#: A drawn body, maybe captured and referred back to (``(X)-\1``), maybe anchored, maybe case-insensitive.
PATTERNS = st.tuples(
    st.recursive(_atoms(), _extend, max_leaves=8),
    st.booleans(),
    st.booleans(),
    st.sampled_from(["", "(?i)"]),
    st.sampled_from(["", *BACK_REFERENCES]),
).map(lambda t: t[3] + ("^" if t[1] else "") + (f"({t[0]}){t[4]}" if t[4] else t[0]) + ("$" if t[2] else ""))


@settings(max_examples=300, deadline=None)
@given(pattern=PATTERNS, seed=st.integers(0, 2**32))
def test_a_sample_matches_its_pattern(pattern: str, seed: int) -> None:
    text = sample(pattern, random.Random(seed), _budget())
    assert re.search(pattern, text), (pattern, text)


@settings(max_examples=200, deadline=None)
@given(pattern=PATTERNS, seed=st.integers(0, 2**32), low=st.integers(0, 12), width=st.integers(0, 12))
def test_a_sample_within_length_bounds_matches_or_is_refused(pattern: str, seed: int, low: int, width: int) -> None:
    try:
        text = sample(pattern, random.Random(seed), _budget(), low, low + width)
    except RegexError as exc:
        refusal = str(exc)
        assert any(word in refusal for word in ("Length", "anchors", "characters")), refusal
        return
    assert re.search(pattern, text), (pattern, text)
    assert low <= len(text) <= low + width


@pytest.mark.parametrize(
    "pattern", [r"^(a)(?:\1){3}$", r"^(ab|cd)(?:-\1)+$", r"^(x?)(?:\1){2}y$", r"^([a-z]{2})\1{2}$"]
)
def test_a_repeated_back_reference_repeats_what_its_group_captured(pattern: str) -> None:
    # ``(a)(?:\1){3}`` once drew "a": the back-reference counted as empty, so its repeats could be left out
    for seed in range(20):
        text = sample(pattern, random.Random(seed), _budget())
        assert re.search(pattern, text), (pattern, text)
    answered = instance_for({"type": "string", "pattern": pattern}, seed="a")  # a structured answer's string
    assert re.search(pattern, answered), (pattern, answered)


def test_same_seed_same_string() -> None:
    pattern = r"^[A-Z]{2}-\d{3,5}(?:[a-z]|_)+$"
    first = sample(pattern, random.Random(7), _budget())
    assert first == sample(pattern, random.Random(7), _budget())
    assert re.search(pattern, first)


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("^(?!(x+x+)+y)(x+x+)+$", "look-ahead is not supported"),
        ("a(?=b)", "look-ahead is not supported"),
        ("(?<!a)b", "look-behind is not supported"),
        ("(?>a+)b", "atomic groups"),
        ("a++b", "possessive quantifiers"),
        ("(a)?(?(1)b|c)", "conditional groups"),
        (r"\bcat\b", "word boundaries"),
        ("x" * 2000, "longer than 1024"),
        ("(" * 80 + "a" + ")" * 80, "nested deeper than 64"),
        ("[", "not a valid regular expression"),
    ],
)
def test_what_cannot_be_built_is_refused_naming_it(pattern: str, reason: str) -> None:
    budget = _budget()
    with pytest.raises(RegexError, match=re.escape(reason)):
        sample(pattern, random.Random(1), budget)


@pytest.mark.parametrize("pattern", ["(a{3000}){3000}", "((ab){100}){100}x{30000}"])
def test_a_pattern_longer_than_the_budget_is_refused_before_it_is_built(pattern: str) -> None:
    budget = _budget(chars=32 * 1024)
    with pytest.raises(BudgetExceededError, match="shortest match"):
        sample(pattern, random.Random(1), budget)
    budget.spend_steps(25_000 - 200)  # only the parse was spent: no text was walked


def test_steps_are_spent_as_nodes_are_walked() -> None:
    with pytest.raises(BudgetExceededError, match="steps"):
        sample("((a|b)(c|d)){3000}", random.Random(1), _budget(steps=5_000))
    assert re.fullmatch("((a|b)(c|d)){1000}", sample("((a|b)(c|d)){1000}", random.Random(1), _budget()))


def test_an_empty_body_repeated_a_billion_times_costs_nothing() -> None:
    assert sample("(?:){1000000000}x", random.Random(1), _budget(steps=1_000)) == "x"


def test_ignore_case_negated_classes_draw_characters_without_case() -> None:
    rng = random.Random(3)
    for _ in range(50):
        text = sample("(?i)[^a-z]{5}", rng, _budget())
        assert re.fullmatch("(?i)[^a-z]{5}", text), text


def test_anchors_are_honoured_by_position() -> None:
    rng = random.Random(5)
    for _ in range(30):
        text = sample("(?:^ab|cd)ef$", rng, _budget(), min_length=8)
        assert re.search("(?:^ab|cd)ef$", text), text
        assert len(text) >= 8, text
