"""The one-release deprecation of the names that moved to ``evaljig_corpus``: one message format for all of them."""

from __future__ import annotations

import warnings


def warn_moved(old: str, instead: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` moved; ``instead`` is the import to use now (``stacklevel`` 3: the importer's line)."""
    warnings.warn(
        f"{old} is deprecated and will be removed in the next release; use {instead} instead",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
