"""Every envelope and corpus rule, on a writable copy of the corpus; one report names every problem."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from evaljig_corpus import FixtureError
from evaljig_corpus._loader import corpus_problems, load_capability_fixture_at, validate_corpus_at

from .corpus_copies import Edit

ONLY_FIXTURE_FILES = "only valid_baseline.json and invalid_<reason>.json files belong in a capability folder"

KNOWN = (
    "chat, completion, stream, embed, tools, logprobs, models, loglikelihood, responses_tools, responses_stream, "
    "json_object, structured, multiturn_tools, nested_tools, reasoning, truncation, broken_stream, token_limits, "
    "broken_tools"
)  # the capabilities, in corpus order


def problems(root: Path) -> list[str]:
    return corpus_problems(root)[1]


def test_a_clean_copy_has_no_problems(corpus_copy: Path) -> None:
    assert problems(corpus_copy) == []
    assert len(validate_corpus_at(corpus_copy)) == 66


def _set(key: str, value: Any) -> Any:
    return lambda data: data.__setitem__(key, value)


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("schema_version", True, "schema_version: must be the integer 1, got true"),
        ("schema_version", 1.0, "schema_version: must be the integer 1, got 1.0"),
        ("schema_version", "1", 'schema_version: must be the integer 1, got "1"'),
        ("schema_version", 2, "schema_version: unsupported version 2 (this loader reads 1)"),
        ("id", "chat.baseline", "id: must be 'chat.valid_baseline' (<capability>.<file stem>), got \"chat.baseline\""),
        ("capability", "stream", "capability: 'stream' does not match its folder 'chat'"),
        (
            "capability",
            "vision",
            f"capability: must be one of {KNOWN}",
        ),
        ("data_class", "scraped", 'data_class: must be one of synthetic, captured, host-supplied, got "scraped"'),
        ("expected", "invalid", "expected: 'invalid' contradicts the file name 'valid_baseline' (expected 'valid')"),
        ("expected_error_pattern", "HTTP", "expected_error_pattern: must be null for a valid fixture"),
        ("description", "Two sentences. Not allowed.", "description: must be one sentence on one line"),
        ("description", "No final period", "description: must be one sentence on one line"),
        ("description", "", "description: must be a non-empty string"),
        ("payload", [], "payload: must be an object, got []"),
        ("notes", "hi", "unknown key 'notes'"),
    ],
)
def test_envelope_rules_on_the_baseline(edit: Edit, corpus_copy: Path, key: str, value: Any, problem: str) -> None:
    edit("chat/valid_baseline", _set(key, value))
    found = problems(corpus_copy)
    assert len(found) == 1, found
    assert found[0].startswith(f"chat/valid_baseline.json: {problem}")


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("expected_error_pattern", None, "must be a non-empty regular expression for an invalid fixture"),
        ("expected_error_pattern", "(unclosed", "does not compile: missing ), unterminated subpattern"),
        ("expected", "valid", "'valid' contradicts the file name 'invalid_unknown_role' (expected 'invalid')"),
    ],
)
def test_invalid_fixtures_need_a_compiling_pattern(
    edit: Edit, corpus_copy: Path, key: str, value: Any, problem: str
) -> None:
    edit("chat/invalid_unknown_role", _set(key, value))
    found = problems(corpus_copy)
    assert len(found) == 1, found
    assert found[0].startswith(f"chat/invalid_unknown_role.json: {key}: {problem}")


def test_patterns_that_overflow_or_recurse_are_reported_not_raised(edit: Edit, corpus_copy: Path) -> None:
    edit("chat/invalid_unknown_role", _set("expected_error_pattern", "a{4294967296}"))
    edit("embed/invalid_missing_input", _set("expected_error_pattern", "(" * 5000 + ")" * 5000))
    found = problems(corpus_copy)
    assert [p.split(": does not compile: ")[0] for p in found] == [
        "chat/invalid_unknown_role.json: expected_error_pattern",
        "embed/invalid_missing_input.json: expected_error_pattern",
    ]
    assert found[0].endswith("the repetition number is too large")
    assert "recursion" in found[1]


def test_fixtures_are_hashable_and_equal_by_value(corpus_copy: Path) -> None:
    first = load_capability_fixture_at(corpus_copy, "chat", "valid_baseline")
    again = load_capability_fixture_at(corpus_copy, "chat", "valid_baseline")
    other = load_capability_fixture_at(corpus_copy, "chat", "invalid_unknown_role")
    assert first == again
    assert hash(first) == hash(again)
    assert {first, again, other} == {first, other}
    assert first != dataclasses.replace(first, payload={**first.payload, "max_tokens": 1})  # payload still compared


def test_missing_keys_are_each_named(edit: Edit, corpus_copy: Path) -> None:
    edit("embed/valid_baseline", lambda d: [d.pop(k) for k in ("data_class", "description")])
    assert problems(corpus_copy) == [
        "embed/valid_baseline.json: missing key 'data_class'",
        "embed/valid_baseline.json: missing key 'description'",
    ]


def test_payload_keys_are_the_helper_arguments(edit: Edit, corpus_copy: Path) -> None:
    edit("tools/valid_baseline", lambda d: (d["payload"].pop("model"), d["payload"].update(timeout=1, seed=7)))
    assert problems(corpus_copy) == [
        "tools/valid_baseline.json: payload: 'timeout' is not an argument of assert_tools_conformance()",
        "tools/valid_baseline.json: payload: 'seed' is not an argument of assert_tools_conformance()",
        "tools/valid_baseline.json: payload: missing required argument 'model' of assert_tools_conformance()",
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"id": 1, "id": 2}', "not valid JSON: duplicate key 'id'"),
        ('{"schema_version": NaN}', "not valid JSON: NaN is not a JSON number"),
        ("{", "not valid JSON: Expecting property name enclosed in double quotes at line 1"),
        ("[1]", "must be a JSON object (the fixture envelope)"),
    ],
)
def test_unparsable_files(corpus_copy: Path, text: str, problem: str) -> None:
    (corpus_copy / "models" / "invalid_empty_model_id.json").write_text(text, encoding="utf-8")
    assert problems(corpus_copy) == [f"models/invalid_empty_model_id.json: {problem}"]


def test_cardinality_per_capability(corpus_copy: Path) -> None:
    (corpus_copy / "stream" / "valid_baseline.json").unlink()
    (corpus_copy / "models" / "invalid_empty_model_id.json").unlink()
    assert problems(corpus_copy) == [
        "stream/: needs exactly one valid_baseline.json, found 0",
        "models/: needs at least two invalid_<reason>.json fixtures, found 1",
    ]


def test_patterns_must_be_distinct(edit: Edit, corpus_copy: Path) -> None:
    pattern = json.loads((corpus_copy / "embed" / "invalid_missing_input.json").read_text())["expected_error_pattern"]
    edit("embed/invalid_zero_dimensions", _set("expected_error_pattern", pattern))
    assert problems(corpus_copy) == [
        "embed/invalid_zero_dimensions.json: expected_error_pattern repeats embed/invalid_missing_input.json's;"
        " each invalid fixture names a distinct failure"
    ]


def test_ids_must_be_unique(corpus_copy: Path) -> None:
    source = corpus_copy / "models" / "invalid_empty_model_id.json"
    (corpus_copy / "models" / "invalid_empty_id_again.json").write_text(source.read_text(), encoding="utf-8")
    assert problems(corpus_copy) == [
        "models/invalid_empty_id_again.json: id: must be 'models.invalid_empty_id_again' (<capability>.<file stem>),"
        ' got "models.invalid_empty_model_id"',
        "models/invalid_empty_id_again.json: id 'models.invalid_empty_model_id' is also claimed by"
        " models/invalid_empty_model_id.json",
        "models/invalid_empty_model_id.json: id 'models.invalid_empty_model_id' is also claimed by"
        " models/invalid_empty_id_again.json",
    ]


def test_stray_files_folders_and_a_missing_charter(corpus_copy: Path) -> None:
    (corpus_copy / "README.md").unlink()
    (corpus_copy / "vision").mkdir()
    (corpus_copy / "chat" / "notes.txt").write_text("x")
    (corpus_copy / "chat" / "Valid Baseline.json").write_text("{}")
    (corpus_copy / "logprobs").rename(corpus_copy / "logprob")
    assert problems(corpus_copy) == [
        "README.md: the contributor charter is missing",
        f"logprob: not a capability folder (known: {KNOWN})",
        f"vision: not a capability folder (known: {KNOWN})",
        f"chat/Valid Baseline.json: {ONLY_FIXTURE_FILES}",
        f"chat/notes.txt: {ONLY_FIXTURE_FILES}",
        "logprobs/: the capability folder is missing",
    ]


def test_loading_one_broken_fixture_names_every_problem(edit: Edit, corpus_copy: Path) -> None:
    edit("completion/invalid_missing_prompt", lambda d: d.update(schema_version=False, capability="chat", extra=1))
    with pytest.raises(FixtureError) as caught:
        load_capability_fixture_at(corpus_copy, "completion", "invalid_missing_prompt")
    assert caught.value.problems == (
        "completion/invalid_missing_prompt.json: unknown key 'extra'",
        "completion/invalid_missing_prompt.json: schema_version: must be the integer 1, got false",
        "completion/invalid_missing_prompt.json: capability: 'chat' does not match its folder 'completion'",
    )
    assert str(caught.value).startswith("completion/invalid_missing_prompt.json is not a valid fixture:\n  ")


def test_a_broken_corpus_gives_one_report_naming_every_problem(edit: Edit, corpus_copy: Path, golden: Any) -> None:
    edit("chat/valid_baseline", _set("schema_version", True))
    edit("chat/invalid_unknown_role", lambda d: d.update(id="chat.unknown_role", notes="todo"))
    edit("completion/invalid_missing_prompt", lambda d: d.update(capability="chat", expected_error_pattern="("))
    (corpus_copy / "stream" / "invalid_zero_max_tokens.json").unlink()
    (corpus_copy / "stream" / "invalid_missing_messages.json").unlink()
    edit("embed/invalid_zero_dimensions", _set("expected_error_pattern", "HTTP 4\\d\\d\\b.*'input'"))
    edit("tools/invalid_tools_not_array", lambda d: (d.update(schema_version=1.0), d["payload"].update(seed=1)))
    edit("logprobs/valid_baseline", lambda d: d.update(description="Two. Sentences.", expected_error_pattern="x"))
    (corpus_copy / "models" / "invalid_Bad Name.json").write_text("{}")
    (corpus_copy / "notes.txt").write_text("stray")
    with pytest.raises(FixtureError) as caught:
        validate_corpus_at(corpus_copy)
    assert len(caught.value.problems) == 13
    assert golden == str(caught.value)
