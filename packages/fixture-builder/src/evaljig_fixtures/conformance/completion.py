"""Deprecated: ``evaljig_fixtures.conformance.completion`` moved to ``evaljig_corpus``; removed in the next release."""

from __future__ import annotations

from evaljig_corpus import assert_completion_conformance
from evaljig_fixtures._moved import warn_moved

__all__ = ["assert_completion_conformance"]

warn_moved("evaljig_fixtures.conformance.completion", "`from evaljig_corpus import assert_completion_conformance`")
