"""Deprecated: ``evaljig_fixtures.conformance.embed`` moved to ``evaljig_corpus``; removed in the next release."""

from __future__ import annotations

from evaljig_corpus import assert_embed_conformance
from evaljig_fixtures._moved import warn_moved

__all__ = ["assert_embed_conformance"]

warn_moved("evaljig_fixtures.conformance.embed", "`from evaljig_corpus import assert_embed_conformance`")
