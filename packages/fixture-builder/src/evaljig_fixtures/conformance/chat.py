"""Deprecated: ``evaljig_fixtures.conformance.chat`` moved to ``evaljig_corpus``; removed in the next release."""

from __future__ import annotations

from evaljig_corpus import assert_chat_conformance, assert_logprobs_conformance
from evaljig_fixtures._moved import warn_moved

__all__ = ["assert_chat_conformance", "assert_logprobs_conformance"]

warn_moved(
    "evaljig_fixtures.conformance.chat",
    "`from evaljig_corpus import assert_chat_conformance, assert_logprobs_conformance`",
)
