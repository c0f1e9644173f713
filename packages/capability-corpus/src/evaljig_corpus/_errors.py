"""The package's exception types: one base, one for the corpus, one for conformance."""

from __future__ import annotations

from evaljig_common import EvaljigError


class EvaljigCorpusError(EvaljigError):
    """Base of every error this package raises on purpose, so callers can catch one type."""


class FixtureError(EvaljigCorpusError):
    """The corpus (or one fixture file) breaks the envelope rules; ``problems`` lists every one."""

    def __init__(self, problems: list[str] | tuple[str, ...], *, summary: str | None = None) -> None:
        self.problems = tuple(problems)
        head = summary or f"fixture corpus has {len(self.problems)} problem(s):"
        super().__init__("\n".join([head, *(f"  {p}" for p in self.problems)]))


class ConformanceError(EvaljigCorpusError):
    """A target broke the response contract, or rejected a request; names capability, field and reason."""

    def __init__(self, capability: str, field: str, reason: str, *, status: int | None = None) -> None:
        self.capability = capability
        self.field = field
        self.reason = reason
        self.status = status
        super().__init__(f"{capability}: {field}: {reason}")
