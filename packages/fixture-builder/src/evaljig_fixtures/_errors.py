"""The package's exception types: one base, one for dataset packages, one for regen builders.

The corpus's own errors (``FixtureError``, ``ConformanceError``) live in ``evaljig_corpus``.
"""

from __future__ import annotations

from evaljig_common import EvaljigError


class EvaljigFixturesError(EvaljigError):
    """Base of every error this package raises on purpose, so callers can catch one type."""


class DatasetPackageError(EvaljigFixturesError):
    """A dataset package zip is unusable; names the file and every problem found in it."""

    def __init__(self, path: object, problems: list[str] | tuple[str, ...]) -> None:
        self.path = str(path)
        self.problems = tuple(problems)
        if len(self.problems) == 1:
            message = f"{self.path}: {self.problems[0]}"
        else:
            message = "\n".join([f"{self.path}: {len(self.problems)} problems:", *(f"  {p}" for p in self.problems)])
        super().__init__(message)


class BuildError(EvaljigFixturesError):
    """A regen builder could not produce its outputs; names the builder (and file) and the reason."""
