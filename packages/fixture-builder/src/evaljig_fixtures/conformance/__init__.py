"""Deprecated: the conformance helpers moved to ``evaljig_corpus``; this package is removed in the next release."""

from __future__ import annotations

from evaljig_corpus import _conformance
from evaljig_corpus._conformance import *  # noqa: F403  (the same names, one list: _conformance.__all__)
from evaljig_fixtures._moved import warn_moved

__all__ = list(_conformance.__all__)

warn_moved("evaljig_fixtures.conformance", "`evaljig_corpus`")
