"""The corpus names that moved to ``evaljig_corpus`` still import from ``evaljig_fixtures`` for one release.

Each old name and module warns with a ``DeprecationWarning`` naming the new import, and gives
the very object ``evaljig_corpus`` exports. A module warns when it is first imported, so each
test imports it afresh (``monkeypatch`` puts the cached module back afterwards).
"""

from __future__ import annotations

import importlib
import re
import sys

import pytest

import evaljig_corpus
import evaljig_fixtures
from evaljig_corpus import _corpus_run, _loader

OLD_NAMES = [
    "CAPABILITIES",
    "CAPABILITY_FIXTURE_NAMES",
    "CONFORMANCE_CHECKS",
    "DATA_CLASSES",
    "FIXTURE_NAMES",
    "FIXTURE_SCHEMA_VERSION",
    "CapabilityFixture",
    "ConformanceError",
    "FixtureError",
    "Target",
    "assert_chat_conformance",
    "assert_completion_conformance",
    "assert_embed_conformance",
    "assert_logprobs_conformance",
    "assert_models_conformance",
    "assert_stream_conformance",
    "assert_tools_conformance",
    "configured_client",
    "iter_all_fixtures",
    "iter_capability_fixtures",
    "list_fixture_names",
    "load_capability_fixture",
    "run_corpus",
    "validate_corpus",
]


def _fresh(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Forget a cached lookup, so the next one goes through ``__getattr__`` again.

    Looked up in the module's own namespace: ``hasattr`` (as ``delattr(raising=False)`` uses) would warn itself.
    """
    if name in vars(evaljig_fixtures):
        monkeypatch.delattr(evaljig_fixtures, name)


@pytest.mark.parametrize("name", OLD_NAMES)
def test_an_old_name_warns_and_is_the_same_object(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    _fresh(monkeypatch, name)
    with pytest.warns(
        DeprecationWarning, match=rf"^evaljig_fixtures\.{name} is deprecated .*`from evaljig_corpus import {name}`"
    ):
        old = getattr(evaljig_fixtures, name)
    assert old is getattr(evaljig_corpus, name)


@pytest.mark.parametrize("name", ["CHAT_PLACEHOLDER", "EMBED_PLACEHOLDER", "render_table"])
def test_a_name_now_internal_to_the_corpus_warns_and_still_works(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    _fresh(monkeypatch, name)
    with pytest.warns(DeprecationWarning, match=r"use `evaljig-corpus conformance`"):
        old = getattr(evaljig_fixtures, name)
    assert old is getattr(_corpus_run, name)
    assert name not in evaljig_corpus.__all__


def test_outcome_is_now_fixture_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh(monkeypatch, "Outcome")
    with pytest.warns(DeprecationWarning, match="`from evaljig_corpus import FixtureVerdict`"):
        from evaljig_fixtures import Outcome
    assert Outcome is evaljig_corpus.FixtureVerdict


def test_each_name_warns_once(monkeypatch: pytest.MonkeyPatch, recwarn: pytest.WarningsRecorder) -> None:
    _fresh(monkeypatch, "validate_corpus")
    first, again = evaljig_fixtures.validate_corpus, evaljig_fixtures.validate_corpus
    assert first is again is evaljig_corpus.validate_corpus
    assert len([w for w in recwarn if issubclass(w.category, DeprecationWarning)]) == 1


def test_unknown_names_are_still_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="module 'evaljig_fixtures' has no attribute 'nope'"):
        evaljig_fixtures.nope  # noqa: B018


def test_the_public_names_need_no_warning(recwarn: pytest.WarningsRecorder) -> None:
    for name in evaljig_fixtures.__all__:
        getattr(evaljig_fixtures, name)
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]
    assert not set(OLD_NAMES) & set(evaljig_fixtures.__all__)


SHIMS = {
    "evaljig_fixtures.corpus": (_loader, ["validate_corpus", "corpus_root", "corpus_problems", "validate_corpus_at"]),
    "evaljig_fixtures.conformance": (evaljig_corpus, ["CONFORMANCE_CHECKS", "assert_chat_conformance"]),
    "evaljig_fixtures.conformance.chat": (evaljig_corpus, ["assert_chat_conformance", "assert_logprobs_conformance"]),
    "evaljig_fixtures.conformance.completion": (evaljig_corpus, ["assert_completion_conformance"]),
    "evaljig_fixtures.conformance.embed": (evaljig_corpus, ["assert_embed_conformance"]),
    "evaljig_fixtures.conformance.models": (evaljig_corpus, ["assert_models_conformance"]),
    "evaljig_fixtures.conformance.stream": (evaljig_corpus, ["assert_stream_conformance"]),
    "evaljig_fixtures.conformance.tools": (evaljig_corpus, ["assert_tools_conformance"]),
}


@pytest.mark.parametrize("module", SHIMS)
def test_an_old_module_warns_and_gives_the_same_objects(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    for cached in ("evaljig_fixtures.conformance", module):
        monkeypatch.delitem(sys.modules, cached, raising=False)
    with pytest.warns(DeprecationWarning, match=rf"^{re.escape(module)} is deprecated .*evaljig_corpus"):
        shim = importlib.import_module(module)
    source, names = SHIMS[module]
    for name in names:
        assert getattr(shim, name) is getattr(source, name), name
