"""Pieces shared by the conformance helpers: request bodies and the completion envelope."""

from __future__ import annotations

from typing import Any

from evaljig_corpus._checks import Checker

#: Finish reasons OpenAI documents for chat and text completions.
FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter", "function_call")


def request_body(**fields: Any) -> dict[str, Any]:
    """Only the fields the caller gave: ``None`` means "leave it out", so a target sees exactly the payload."""
    return {name: value for name, value in fields.items() if value is not None}


def check_head(check: Checker, data: dict[str, Any], obj: str, field: str = "response") -> None:
    """``id``, ``object``, ``created`` and ``model`` of a completion or chunk."""
    check.string(data.get("id"), f"{field}.id", non_empty=True)
    check.equal(data.get("object"), obj, f"{field}.object")
    check.integer(data.get("created"), f"{field}.created", minimum=0)
    check.string(data.get("model"), f"{field}.model", non_empty=True)


def check_choices(check: Checker, data: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """``count`` choice objects whose ``index`` values are exactly 0..count-1, returned in index order."""
    choices = [check.obj(c, f"choices[{i}]") for i, c in enumerate(check.arr(data.get("choices"), "choices"))]
    if len(choices) != count:
        check.fail("choices", f"must hold {count} choice(s), got {len(choices)}")
    indexes = [check.integer(c.get("index"), f"choices[{i}].index", minimum=0) for i, c in enumerate(choices)]
    if sorted(indexes) != list(range(count)):
        check.fail("choices[].index", f"must be 0..{count - 1} once each, got {indexes}")
    for i, choice in enumerate(choices):
        check.one_of(choice.get("finish_reason"), FINISH_REASONS, f"choices[{i}].finish_reason")
    return sorted(choices, key=lambda c: int(c["index"]))
