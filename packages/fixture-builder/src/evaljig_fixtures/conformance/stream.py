"""Deprecated: ``evaljig_fixtures.conformance.stream`` moved to ``evaljig_corpus``; removed in the next release."""

from __future__ import annotations

from evaljig_corpus import assert_stream_conformance
from evaljig_fixtures._moved import warn_moved

__all__ = ["assert_stream_conformance"]

warn_moved("evaljig_fixtures.conformance.stream", "`from evaljig_corpus import assert_stream_conformance`")
