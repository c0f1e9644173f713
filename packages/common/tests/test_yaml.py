"""The one strict YAML reader: what ``yaml.safe_load`` makes of a document, or one refusal naming the place."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from evaljig_common import MAX_YAML_DEPTH, StrictYAMLError, loads_yaml_strict

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(),
    st.sampled_from(["yes", "no", "on", "0o17", "1_000", "2024-01-02", "~", "null", "<<", "1e3", ".inf", "0x1F"]),
)
KEYS = st.one_of(st.text(max_size=8), st.integers(), st.booleans())
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=20
)


@settings(max_examples=300, deadline=None)
@given(VALUES, st.booleans(), st.booleans())
def test_reads_what_safe_load_reads(value: Any, flow: bool, canonical: bool) -> None:
    text = yaml.safe_dump(value, default_flow_style=flow, canonical=canonical, allow_unicode=True)
    assert loads_yaml_strict(text) == yaml.safe_load(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=3), SCALARS, max_size=3), min_size=1, max_size=4))
def test_shared_values_and_merge_keys_mean_what_pyyaml_makes_of_them(bases: list[dict[str, Any]]) -> None:
    anchors = "".join(f"b{i}: &b{i} {yaml.safe_dump(base, default_flow_style=True)}" for i, base in enumerate(bases))
    merges = ", ".join(f"*b{i}" for i in range(len(bases)))
    text = f"{anchors}one:\n  <<: *b0\n  own: 1\nall:\n  <<: [{merges}]\n  own: 2\nshared: [*b0, *b0]\n"
    assert loads_yaml_strict(text, max_alias_nodes=1000) == yaml.safe_load(text)


#: Pieces a hostile or broken file is made of: YAML's indicators, anchors, tags, merge keys, odd characters.
PIECES = st.sampled_from(
    [*"[]{}:,-&*!|>'\"?#%@`\n \t.0a1", "\ud800", "\x00", "\x85", "\ufeff", "<<", "&a ", "*a", "!!binary ", "!!int ",
     "!!bool ", "!!python/tuple ", "!!set ", "---\n", "...\n", "a: 1\n", "- x\n", "{a: [b]}", "&a {k: v}", "<<: *a\n"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=30).map("".join), st.sampled_from([0, 1000]))
def test_any_text_is_a_value_or_a_refusal_never_another_error(text: str, budget: int) -> None:
    try:
        value = loads_yaml_strict(text, max_alias_nodes=budget)
    except StrictYAMLError:
        return
    try:  # what it reads, PyYAML reads the same (what PyYAML refuses it may refuse too: never the other way)
        expected = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        pytest.fail(f"read {text!r}, which PyYAML refuses")
    assert repr(value) == repr(expected)


def test_the_mapping_s_own_keys_win_over_merged_ones_wherever_they_stand() -> None:
    text = "b: &b {x: 1, y: 1}\nc: &c {y: 2, z: 2}\nd:\n  x: 0\n  <<: [*b, *c]\n  <<: {z: 3}\n"
    assert loads_yaml_strict(text, max_alias_nodes=100)["d"] == yaml.safe_load(text)["d"] == {"x": 0, "y": 1, "z": 3}


@pytest.mark.parametrize(
    ("text", "kind", "line", "reason"),
    [
        ("a: 1\nb: 2\na: 3\n", "duplicate", 3, "the key 'a' is repeated in one mapping"),
        ("a: &x 1\nb: *x\n", "alias", 1, "anchors and aliases are not allowed in a spec (&name, *name"),
        ("a: 1\n---\nb: 2\n", "document", 2, "more than one YAML document: a spec is one document"),
        (
            "a: !!python/name:os.system x\n",
            "tag",
            1,
            "the tag 'tag:yaml.org,2002:python/name:os.system' is not allowed",
        ),
        ("a: !!set {x}\n", "tag", 1, "the tag 'tag:yaml.org,2002:set' is not allowed in a spec"),
        ("? [1]\n: 2\n", "key", 1, "a mapping key must be a scalar"),
        ("a: [1\nb: 2\n", "syntax", 2, "did not find expected ',' or ']'"),
        ("- <<: {a: 1}\n- <<\n", "merge", 2, "a merge key '<<' is only allowed as a mapping's key"),
        ("a:\n  <<: [1]\n", "merge", 2, "a merge key '<<' takes a mapping or a list of mappings"),
    ],
)
def test_refusals_name_the_rule_and_the_place(text: str, kind: str, line: int, reason: str) -> None:
    with pytest.raises(StrictYAMLError) as caught:
        loads_yaml_strict(text, document="a spec")
    assert (caught.value.kind, caught.value.line) == (kind, line)
    assert caught.value.reason.startswith(reason)
    assert str(caught.value).startswith(f"line {line}, column ")
    assert caught.value.where == f" at line {line}, column {caught.value.column}"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("a: !!bool maybe\n", "the value 'maybe' is not a valid bool"),  # a KeyError in PyYAML's constructor
        ("a: !!timestamp soon\n", "the value 'soon' is not a valid timestamp"),  # an AttributeError there
        ("a: 2024-02-30\n", "the value '2024-02-30' is not a valid timestamp: day is out of range for month"),
        (
            "a: 1" + "0" * 5000 + "\n",
            "the value '1000000000000000000000000000000000000000...' is not a valid int: Exceeds",
        ),
    ],
)
def test_a_scalar_its_type_cannot_hold_is_refused_not_a_crash(text: str, reason: str) -> None:
    with pytest.raises(StrictYAMLError) as caught:
        loads_yaml_strict(text)
    assert caught.value.reason.startswith(reason)
    assert (caught.value.kind, caught.value.line, caught.value.column) == ("scalar", 1, 4)


def test_a_repeated_key_is_named_for_the_caller() -> None:
    with pytest.raises(StrictYAMLError) as caught:
        loads_yaml_strict("retry:\n  attempts: 3\n  attempts: 4\n")
    assert (caught.value.key, caught.value.line, caught.value.column) == ("attempts", 3, 3)


def test_repeated_merge_keys_are_not_repeated_keys() -> None:
    assert loads_yaml_strict("<<: {a: 1}\n<<: {b: 2}\n") == {"a": 1, "b": 2}


@pytest.mark.parametrize("opening", ["[", "{a: "])
def test_nesting_is_bounded_without_recursion(opening: str) -> None:
    closing = "]" if opening == "[" else "}"
    assert loads_yaml_strict(opening * MAX_YAML_DEPTH + "1" + closing * MAX_YAML_DEPTH) is not None
    deep = opening * 100_000 + closing * 100_000  # libyaml's own composer would overflow the C stack
    with pytest.raises(StrictYAMLError, match=f"nested deeper than {MAX_YAML_DEPTH} levels") as caught:
        loads_yaml_strict(deep)
    assert caught.value.kind == "depth"
    with pytest.raises(StrictYAMLError, match="nested deeper than 3 levels"):
        loads_yaml_strict("[[[[1]]]]", max_depth=3)


def test_an_alias_bomb_is_refused_within_its_budget() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]" for p, n in zip("abcdefgh", "bcdefghi", strict=True)]
    with pytest.raises(StrictYAMLError, match="aliases expand to more than 100000 extra nodes") as caught:
        loads_yaml_strict("\n".join(lines) + "\n", max_alias_nodes=100_000)
    assert caught.value.kind == "alias"
    assert caught.value.line is not None
    assert caught.value.line <= 6  # found early: never built out


def test_aliases_count_their_nesting() -> None:
    text = "a: &a [[[[1]]]]\nb: [[*a]]\n"
    assert loads_yaml_strict(text, max_alias_nodes=100, max_depth=7) == yaml.safe_load(text)
    with pytest.raises(StrictYAMLError, match="nested deeper than 6 levels once aliases are expanded"):
        loads_yaml_strict(text, max_alias_nodes=100, max_depth=6)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("a: &e {self: *e}\n", "recursive alias: *e stands inside the node it names"),
        ("a: *nowhere\n", "the alias *nowhere has no anchor &nowhere before it"),
        ("a: &x 1\nb: &x 2\nc: *x\n", "the anchor &x is defined twice"),
        ("a: &k [1]\nb: {*k : 2}\n", "a mapping key must be a scalar"),
    ],
)
def test_aliases_that_cannot_be_read_are_refused(text: str, reason: str) -> None:
    with pytest.raises(StrictYAMLError) as caught:
        loads_yaml_strict(text, max_alias_nodes=100)
    assert caught.value.reason == reason


def test_scalars_keep_safe_load_s_types() -> None:
    text = "d: 2024-01-02\nb: !!binary aGVsbG8=\nn: ~\nq: '1'\nblock: |\n  two\n  lines\n"
    assert loads_yaml_strict(text) == yaml.safe_load(text)
    assert loads_yaml_strict("") is None
    assert loads_yaml_strict(b"a: \xc3\xa9\n") == {"a": "é"}


def test_text_with_a_lone_surrogate_is_refused_not_a_unicode_error() -> None:
    with pytest.raises(StrictYAMLError, match="a lone surrogate \\(U\\+D800\\) at character 3"):
        loads_yaml_strict("a: \ud800\n")


def test_importing_the_package_does_not_import_yaml() -> None:
    """The noxfile imports evaljig_common from nox's venv, which has no PyYAML."""
    code = (
        "import sys, evaljig_common; assert 'yaml' not in sys.modules; "
        "evaljig_common.loads_yaml_strict; assert 'yaml' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
