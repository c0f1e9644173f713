"""Deprecated: the corpus loader moved to ``evaljig_corpus``; this module is removed in the next release."""

from __future__ import annotations

from evaljig_corpus._loader import (
    CAPABILITY_FIXTURE_NAMES,
    CHARTER,
    FIXTURE_NAMES,
    CapabilityNames,
    corpus_problems,
    corpus_root,
    iter_all_fixtures,
    iter_capability_fixtures,
    list_fixture_names,
    list_fixture_names_at,
    load_capability_fixture,
    load_capability_fixture_at,
    validate_corpus,
    validate_corpus_at,
)
from evaljig_fixtures._moved import warn_moved

__all__ = [
    "CAPABILITY_FIXTURE_NAMES",
    "CHARTER",
    "FIXTURE_NAMES",
    "CapabilityNames",
    "corpus_problems",
    "corpus_root",
    "iter_all_fixtures",
    "iter_capability_fixtures",
    "list_fixture_names",
    "list_fixture_names_at",
    "load_capability_fixture",
    "load_capability_fixture_at",
    "validate_corpus",
    "validate_corpus_at",
]

warn_moved("evaljig_fixtures.corpus", "`evaljig_corpus`")
