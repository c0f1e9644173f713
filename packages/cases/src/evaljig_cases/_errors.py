"""Errors that name the file and the case, so a broken case set is fixed without a debugger."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from evaljig_common import EvaljigError


class CaseLoadError(EvaljigError, ValueError):
    """A case file or folder could not be turned into valid, uniquely named cases."""

    def __init__(self, message: str, *, path: Path | None = None, case: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.case = case


class DuplicateCaseError(CaseLoadError):
    """Two cases share an id; reports and pytest ids are keyed by it, so this is never allowed."""


def describe_validation_error(exc: ValidationError) -> str:
    """``function_call.name: Field required; id: ...`` — one line, every problem."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(case)"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)
