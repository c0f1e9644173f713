"""Deprecated: ``evaljig_fixtures.conformance.tools`` moved to ``evaljig_corpus``; removed in the next release."""

from __future__ import annotations

from evaljig_corpus import assert_tools_conformance
from evaljig_fixtures._moved import warn_moved

__all__ = ["assert_tools_conformance"]

warn_moved("evaljig_fixtures.conformance.tools", "`from evaljig_corpus import assert_tools_conformance`")
