"""The packaged corpus and its public loader, read through importlib.resources."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

import evaljig_corpus
from evaljig_corpus import (
    CAPABILITIES,
    CAPABILITY_FIXTURE_NAMES,
    FIXTURE_NAMES,
    FIXTURE_SCHEMA_VERSION,
    CapabilityFixture,
    ConformanceError,
    EvaljigCorpusError,
    FixtureError,
    corpus_root,
    iter_all_fixtures,
    iter_capability_fixtures,
    list_fixture_names,
    load_capability_fixture,
    validate_corpus,
)

from .corpus_copies import Edit, own_corpus

#: Set by ``nox -s package``: the tests must then import the installed wheel from this venv.
INSTALLED_PREFIX = os.environ.get("EVALJIG_CORPUS_INSTALLED_PREFIX")

KNOWN = (
    "chat, completion, stream, embed, tools, logprobs, models, loglikelihood, responses_tools, responses_stream, "
    "json_object, structured, multiturn_tools, nested_tools, reasoning, truncation, broken_stream, token_limits, "
    "broken_tools"
)  # the capabilities, in corpus order


def test_capabilities_in_corpus_order() -> None:
    assert CAPABILITIES == (
        "chat",
        "completion",
        "stream",
        "embed",
        "tools",
        "logprobs",
        "models",
        "loglikelihood",
        "responses_tools",
        "responses_stream",
        "json_object",
        "structured",
        "multiturn_tools",
        "nested_tools",
        "reasoning",
        "truncation",
        "broken_stream",
        "token_limits",
        "broken_tools",
    )
    assert tuple(CAPABILITY_FIXTURE_NAMES) == CAPABILITIES
    assert tuple(FIXTURE_NAMES) == CAPABILITIES


def test_the_source_designs_names_are_a_tuple_and_sorted_stems() -> None:
    """WorldForge's corpus API: ``CAPABILITY_FIXTURE_NAMES`` is the tuple of capabilities, names sort plainly."""
    assert isinstance(CAPABILITY_FIXTURE_NAMES, tuple)
    assert CAPABILITY_FIXTURE_NAMES == CAPABILITIES
    for capability in CAPABILITY_FIXTURE_NAMES:
        names = list_fixture_names(capability)
        assert names == tuple(sorted(names))
        assert names[-1] == "valid_baseline"  # "invalid_*" sorts first
        # evaljig's own forms keep working: the mapping, and the old by-capability lookup, baseline first
        assert CAPABILITY_FIXTURE_NAMES[capability] == FIXTURE_NAMES[capability] == ("valid_baseline", *names[:-1])
    with pytest.raises(FixtureError, match="unknown capability 'vision'"):
        CAPABILITY_FIXTURE_NAMES["vision"]


def test_packaged_corpus_is_valid() -> None:
    fixtures = validate_corpus()
    assert [f.id for f in fixtures] == [f.id for f in iter_all_fixtures()]
    assert len(fixtures) == sum(len(names) for names in FIXTURE_NAMES.values())


@pytest.mark.parametrize("capability", CAPABILITIES)
def test_each_capability_has_one_baseline_and_named_failures(capability: str) -> None:
    names = FIXTURE_NAMES[capability]
    assert sorted(names) == sorted(list_fixture_names(capability))
    assert names[0] == "valid_baseline"
    assert len(names) >= 3
    assert all(n.startswith("invalid_") for n in names[1:])
    fixtures = list(iter_capability_fixtures(capability))
    assert [f.expected for f in fixtures] == ["valid"] + ["invalid"] * (len(names) - 1)
    assert len({f.expected_error_pattern for f in fixtures[1:]}) == len(fixtures) - 1


def test_fixture_is_frozen_and_kwargs_are_a_private_copy() -> None:
    fixture = load_capability_fixture("chat", "valid_baseline")
    assert isinstance(fixture, CapabilityFixture)
    assert fixture.id == "chat.valid_baseline"
    assert fixture.schema_version == FIXTURE_SCHEMA_VERSION
    assert fixture.data_class == "synthetic"
    assert fixture.is_valid
    assert fixture.expected_error_pattern is None
    assert fixture.error_regex is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        fixture.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        fixture.payload["model"] = "other"  # type: ignore[index]
    kwargs = fixture.kwargs()
    kwargs["messages"].append({"role": "user", "content": "changed"})
    assert len(load_capability_fixture("chat", "valid_baseline").payload["messages"]) == 2
    assert len(fixture.payload["messages"]) == 2


def test_invalid_fixture_pattern_is_compiled_at_load() -> None:
    fixture = load_capability_fixture("chat", "invalid_unknown_role")
    assert fixture.error_regex is not None
    assert fixture.matches(
        "chat: messages[0].role: target rejected the request with HTTP 400 (param 'messages[0].role')"
    )
    assert not fixture.matches("chat: messages: target rejected the request with HTTP 400 (param 'messages')")


@pytest.mark.parametrize("name", ["../chat/valid_baseline", "chat/valid_baseline", "..", "a\\b", "valid_baseline.json"])
def test_names_with_path_parts_are_rejected(name: str) -> None:
    with pytest.raises(FixtureError, match="fixture name"):
        load_capability_fixture("chat", name)


def test_unknown_capability_and_fixture_are_errors() -> None:
    with pytest.raises(FixtureError, match="unknown capability 'vision'"):
        list_fixture_names("vision")
    with pytest.raises(FixtureError, match=r"chat/invalid_nope\.json: no such fixture \(known: valid_baseline, "):
        load_capability_fixture("chat", "invalid_nope")
    assert issubclass(FixtureError, EvaljigCorpusError)
    assert issubclass(ConformanceError, EvaljigCorpusError)


def test_corpus_is_read_from_the_imported_package() -> None:
    package_dir = Path(evaljig_corpus.__file__).parent
    assert Path(str(corpus_root())) == package_dir / "corpus"
    assert (package_dir / "corpus" / "README.md").is_file()
    if INSTALLED_PREFIX is not None:  # nox -s package: the wheel in the fresh venv, not the checkout
        assert package_dir.resolve().is_relative_to(Path(INSTALLED_PREFIX).resolve()), package_dir
        assert "site-packages" in package_dir.parts


def test_validate_corpus_checks_a_folder_of_your_own(corpus_copy: Path) -> None:
    folder = own_corpus(corpus_copy, "chat", "models")
    fixtures = validate_corpus(folder)
    assert {f.capability for f in fixtures} == {"chat", "models"}
    assert fixtures[0].id == "chat.valid_baseline"
    assert validate_corpus(str(folder)) == fixtures  # a str path works too

    (folder / "models" / "invalid_extra.json").write_text("{}", encoding="utf-8")
    (folder / "vision").mkdir()
    with pytest.raises(FixtureError) as caught:
        validate_corpus(folder)
    assert str(caught.value).startswith(f"{folder}: fixture corpus has ")
    assert "vision: not a capability folder (known: chat, completion" in caught.value.problems[0]
    assert any(p.startswith("models/invalid_extra.json: missing key 'id'") for p in caught.value.problems)


def test_a_folder_without_capabilities_is_not_a_corpus(tmp_path: Path) -> None:
    with pytest.raises(FixtureError) as caught:
        validate_corpus(tmp_path)
    assert caught.value.problems == (f"no capability folder (one or more of: {KNOWN})",)
    with pytest.raises(FixtureError, match="the corpus folder is missing"):
        validate_corpus(tmp_path / "nope")


def test_every_loader_reads_a_corpus_folder_of_your_own(corpus_copy: Path, edit: Edit) -> None:
    """``corpus=`` on every loader: a modified copy is read, not the packaged corpus."""
    folder = own_corpus(corpus_copy, "chat", "models")
    edit("chat/valid_baseline", lambda data: data.update(description="Our own baseline."))
    (folder / "chat" / "invalid_unknown_role.json").rename(folder / "chat" / "invalid_our_own.json")
    edit("chat/invalid_our_own", lambda data: data.update(id="chat.invalid_our_own"))

    names = list_fixture_names("chat", corpus=folder)
    assert "invalid_our_own" in names
    assert names == tuple(sorted(names))
    assert "invalid_our_own" not in list_fixture_names("chat")  # the packaged corpus is untouched
    assert load_capability_fixture("chat", "valid_baseline", corpus=folder).description == "Our own baseline."
    chat = list(iter_capability_fixtures("chat", corpus=str(folder)))  # a str folder works too
    assert chat[0].id == "chat.valid_baseline"
    assert "chat.invalid_our_own" in [f.id for f in chat]
    every = list(iter_all_fixtures(corpus=folder))
    assert {f.capability for f in every} == {"chat", "models"}
    assert [f.id for f in every] == [f.id for f in validate_corpus(corpus=folder)]
    assert validate_corpus(corpus=folder) == validate_corpus(folder)
    assert list(iter_capability_fixtures("embed", corpus=folder)) == []  # a capability it does not cover


def test_a_missing_corpus_folder_is_an_error_for_every_loader(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    calls: list[Callable[[], object]] = [
        lambda: list_fixture_names("chat", corpus=missing),
        lambda: load_capability_fixture("chat", "valid_baseline", corpus=missing),
        lambda: list(iter_capability_fixtures("chat", corpus=missing)),
        lambda: list(iter_all_fixtures(corpus=missing)),
        lambda: validate_corpus(corpus=missing),
    ]
    for call in calls:
        with pytest.raises(FixtureError, match=f"{re.escape(str(missing))}: the corpus folder is missing"):
            call()
    with pytest.raises(TypeError, match="path or corpus=, not both"):
        validate_corpus(tmp_path, corpus=tmp_path)
