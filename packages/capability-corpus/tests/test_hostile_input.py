"""Hostile input to the corpus loader: a ``FixtureError`` with the reason, never a traceback or a hang.

Deep nesting, integers over 4,300 digits, overflowing floats and duplicate keys in bulk.
Duplicate detection is shown linear by counting the comparisons it makes, never by timing it;
``benchmarks/bench_fixture_loader.py`` prints the time for 50,000 keys.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evaljig_corpus import FixtureError
from evaljig_corpus._loader import corpus_problems, load_capability_fixture_at
from evaljig_corpus.strict_json import MAX_DEPTH, duplicates
from testkit.counting import counting_str

DEEP = "[" * 100_000 + "]" * 100_000  # far past the interpreter's recursion limit
JUST_TOO_DEEP = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)  # parses in Python, refused by the rule
HUGE_INT = "9" * 5000


def baseline_with(payload_value: str) -> str:
    """The chat baseline envelope with raw JSON text as one payload value."""
    return (
        '{"schema_version": 1, "id": "chat.valid_baseline", "capability": "chat", "data_class": "synthetic",'
        ' "expected": "valid", "expected_error_pattern": null, "description": "A hostile baseline.",'
        f' "payload": {{"model": "m", "messages": {payload_value}}}}}'
    )


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (DEEP, f"nested deeper than {MAX_DEPTH} levels"),
        (JUST_TOO_DEEP, f"nested deeper than {MAX_DEPTH} levels"),
        (HUGE_INT, "integer with 5000 digits, more than the 4300 allowed"),
        (f"-{HUGE_INT}", "integer with 5000 digits, more than the 4300 allowed"),
        ("1e999", "number 1e999 overflows a float"),
    ],
    ids=["deep", "just-too-deep", "huge-int", "huge-negative-int", "float-overflow"],
)
def test_a_hostile_fixture_is_a_fixture_error(corpus_copy: Path, value: str, reason: str) -> None:
    (corpus_copy / "chat" / "valid_baseline.json").write_text(baseline_with(value), encoding="utf-8")
    with pytest.raises(FixtureError) as caught:
        load_capability_fixture_at(corpus_copy, "chat", "valid_baseline")
    assert caught.value.problems == (f"chat/valid_baseline.json: not valid JSON: {reason}",)
    # the whole-corpus check reads each file twice (once leniently for its id): neither read may escape
    assert f"chat/valid_baseline.json: not valid JSON: {reason}" in corpus_problems(corpus_copy)[1]


def test_duplicate_keys_are_named_once_each(corpus_copy: Path) -> None:
    keys = [f"k{i}" for i in range(5_000)] + ["k7", "k42"]
    payload = "{" + ", ".join(f'"{k}": 0' for k in keys) + "}"
    (corpus_copy / "chat" / "valid_baseline.json").write_text(baseline_with(payload), encoding="utf-8")
    with pytest.raises(FixtureError) as caught:
        load_capability_fixture_at(corpus_copy, "chat", "valid_baseline")
    assert caught.value.problems == ("chat/valid_baseline.json: not valid JSON: duplicate keys 'k42', 'k7'",)


@pytest.mark.parametrize("n", [1_000, 4_000])
def test_duplicate_detection_makes_a_linear_number_of_comparisons(n: int) -> None:
    counted, comparisons = counting_str()
    names = [counted(f"name-{i}") for i in range(n)] + [counted("name-3"), counted("name-5")]
    assert duplicates(names) == ["name-3", "name-5"]
    # a hash table compares only names that collide: the two repeats (pairwise checks would make ~n*n)
    assert comparisons() <= 2 + n // 100
