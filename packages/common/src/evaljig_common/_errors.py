"""The one base class of every error an evaljig package raises on purpose.

Each package's errors derive from :class:`EvaljigError` *and* keep the standard-library base
that describes them (``class ConfigError(EvaljigError, ValueError)``), so a caller may catch
``EvaljigError`` for "anything evaljig refused" or the stdlib type it already catches.
"""

from __future__ import annotations


class EvaljigError(Exception):
    """Base of every error an evaljig package raises on purpose; never raised itself."""
