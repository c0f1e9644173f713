"""The package's exception types: one base, one for the corpus, one for conformance."""

from __future__ import annotations


class EvaljigFixturesError(Exception):
    """Base of every error this package raises on purpose, so callers can catch one type."""


class FixtureError(EvaljigFixturesError):
    """The corpus (or one fixture file) breaks the envelope rules; ``problems`` lists every one."""

    def __init__(self, problems: list[str] | tuple[str, ...], *, summary: str | None = None) -> None:
        self.problems = tuple(problems)
        head = summary or f"fixture corpus has {len(self.problems)} problem(s):"
        super().__init__("\n".join([head, *(f"  {p}" for p in self.problems)]))


class ConformanceError(EvaljigFixturesError):
    """A target broke the response contract, or rejected a request; names capability, field and reason."""

    def __init__(self, capability: str, field: str, reason: str, *, status: int | None = None) -> None:
        self.capability = capability
        self.field = field
        self.reason = reason
        self.status = status
        super().__init__(f"{capability}: {field}: {reason}")


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
