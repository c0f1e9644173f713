"""The review's one error: bad input or a repository it cannot read, said in one line."""

from __future__ import annotations

from evaljig_common import EvaljigError


class ReviewError(EvaljigError):
    """Not a git repository, an unknown ``--base``, a bad ``[tool.evaljig.review]`` value, an unwritable output."""
