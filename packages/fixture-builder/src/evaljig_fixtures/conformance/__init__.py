"""Deprecated: the conformance helpers moved to ``evaljig_corpus``; this package is removed in the next release."""

from __future__ import annotations

from evaljig_corpus import (
    CONFORMANCE_CHECKS,
    assert_chat_conformance,
    assert_completion_conformance,
    assert_embed_conformance,
    assert_logprobs_conformance,
    assert_models_conformance,
    assert_stream_conformance,
    assert_tools_conformance,
)
from evaljig_fixtures._moved import warn_moved

__all__ = [
    "CONFORMANCE_CHECKS",
    "assert_chat_conformance",
    "assert_completion_conformance",
    "assert_embed_conformance",
    "assert_logprobs_conformance",
    "assert_models_conformance",
    "assert_stream_conformance",
    "assert_tools_conformance",
]

warn_moved("evaljig_fixtures.conformance", "`evaljig_corpus`")
