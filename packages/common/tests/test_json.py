"""The strict JSON reader: what it refuses (repeated keys, deep nesting, non-JSON constants), and that it never
recurses into a RecursionError."""

from __future__ import annotations

import sys

import pytest

from evaljig_common import MAX_JSON_DEPTH, EvaljigError, StrictJSONError, loads_strict


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_valid_json_reads_as_the_standard_library_reads_it() -> None:
    assert loads_strict(b'{"a": [1, 2.5, "\\u00e9", null, true], "b": {}}') == {
        "a": [1, 2.5, "é", None, True],
        "b": {},
    }
    assert loads_strict("7") == 7


@pytest.mark.parametrize(
    "text",
    [
        '{"status": "fail", "status": "pass"}',
        '{"m": [{"a": 1, "b": 2, "a": 3}]}',
        '[{"x": {"status": 1, "status": 1}}]',
    ],
)
def test_a_repeated_key_at_any_depth_is_refused_naming_it(text: str) -> None:
    with pytest.raises(StrictJSONError, match=r"^duplicate key '(status|a)'$") as caught:
        loads_strict(text)
    assert isinstance(caught.value, EvaljigError)
    assert isinstance(caught.value, ValueError)
    assert caught.value.where == ""


def test_nesting_is_bounded_and_the_bound_is_inclusive() -> None:
    assert loads_strict(nested(MAX_JSON_DEPTH)) is not None
    assert loads_strict('{"a": ' * 5 + "1" + "}" * 5, max_depth=5) == {"a": {"a": {"a": {"a": {"a": 1}}}}}
    with pytest.raises(StrictJSONError, match=rf"^nested deeper than {MAX_JSON_DEPTH} levels$"):
        loads_strict(nested(MAX_JSON_DEPTH + 1))
    with pytest.raises(StrictJSONError, match=r"^nested deeper than 5 levels$"):
        loads_strict('{"a": ' * 6 + "1" + "}" * 6, max_depth=5)


@pytest.mark.parametrize("levels", [300, sys.getrecursionlimit() + 10, 100_000])
def test_any_depth_is_an_error_never_a_recursion_error(levels: int) -> None:
    """Below the C parser's limit the explicit stack measures it; beyond, the parser's RecursionError is caught."""
    with pytest.raises(StrictJSONError, match=r"nested deeper than 256 levels"):
        loads_strict(nested(levels), max_depth=256)


@pytest.mark.parametrize(
    ("data", "reason", "line"),
    [
        (b'{"a": }', "Expecting value", 1),
        (b'{\n "a": 1\n "b": 2}', "Expecting ',' delimiter", 3),
        (b"", "Expecting value", 1),
        (b'{"a": NaN}', "NaN is not a JSON number", None),
        (b"[-Infinity]", "-Infinity is not a JSON number", None),
        (b'{"a": "\xff"}', "not UTF-8 (byte 7)", None),
    ],
)
def test_what_is_not_json_says_why_and_where(data: bytes, reason: str, line: int | None) -> None:
    with pytest.raises(StrictJSONError) as caught:
        loads_strict(data)
    assert (caught.value.reason, caught.value.line) == (reason, line)
    assert str(caught.value) == (f"at line {line}: {reason}" if line else reason)
