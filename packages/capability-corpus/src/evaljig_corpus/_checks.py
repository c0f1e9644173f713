"""Typed field checks that raise a ``ConformanceError`` naming the capability, field path and reason."""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any, NoReturn

from evaljig_corpus._errors import ConformanceError


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "integer", float: "number"}.get(
        type(value), type(value).__name__
    )


class Checker:
    """Checks for one capability; every method returns the value with its checked type."""

    def __init__(self, capability: str) -> None:
        self.capability = capability

    def fail(self, field: str, reason: str, *, status: int | None = None) -> NoReturn:
        raise ConformanceError(self.capability, field, reason, status=status)

    def obj(self, value: Any, field: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(field, f"must be an object, got {_kind(value)}")
        return value

    def arr(self, value: Any, field: str, *, non_empty: bool = False) -> list[Any]:
        if not isinstance(value, list):
            self.fail(field, f"must be an array, got {_kind(value)}")
        if non_empty and not value:
            self.fail(field, "must not be empty")
        return value

    def string(self, value: Any, field: str, *, non_empty: bool = False) -> str:
        if not isinstance(value, str):
            self.fail(field, f"must be a string, got {_kind(value)}")
        if non_empty and not value:
            self.fail(field, "must not be empty")
        return value

    def integer(self, value: Any, field: str, *, minimum: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(field, f"must be an integer, got {_kind(value)}")
        if minimum is not None and value < minimum:
            self.fail(field, f"must be >= {minimum}, got {value}")
        return value

    def number(self, value: Any, field: str, *, maximum: float | None = None) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(field, f"must be a number, got {_kind(value)}")
        if not math.isfinite(value):
            self.fail(field, f"must be finite, got {value}")
        if maximum is not None and value > maximum:
            self.fail(field, f"must be <= {maximum}, got {value}")
        return float(value)

    def equal(self, value: Any, expected: Any, field: str) -> None:
        if value != expected:
            self.fail(field, f"must be {expected!r}, got {value!r}")

    def one_of(self, value: Any, allowed: Collection[Any], field: str) -> None:
        if value not in allowed:
            self.fail(field, f"must be one of {', '.join(map(repr, allowed))}, got {value!r}")

    def usage(self, value: Any, field: str = "usage", *, completion: bool = True) -> dict[str, int]:
        """Token counts are non-negative integers and ``total_tokens`` is their sum."""
        usage = self.obj(value, field)
        prompt = self.integer(usage.get("prompt_tokens"), f"{field}.prompt_tokens", minimum=0)
        raw_completion = usage.get("completion_tokens", None if completion else 0)
        done = self.integer(raw_completion, f"{field}.completion_tokens", minimum=0)
        total = self.integer(usage.get("total_tokens"), f"{field}.total_tokens", minimum=0)
        if total != prompt + done:
            self.fail(
                f"{field}.total_tokens", f"must equal prompt_tokens + completion_tokens ({prompt + done}), got {total}"
            )
        return {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": total}
