from __future__ import annotations

from datetime import UTC, datetime

import pytest

from evaljig_report.layout import case_dirname, run_id, safe_segment, session_name


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"EVALJIG_RUN": "nightly/42", "GITHUB_RUN_ID": "7"}, "nightly_42"),
        ({"GITHUB_RUN_ID": "123", "GITHUB_RUN_ATTEMPT": "2"}, "123-2"),
        ({"GITHUB_RUN_ID": "123"}, "123-1"),
        ({}, "20250102T030405Z"),
    ],
)
def test_run_id_precedence(env: dict[str, str], expected: str) -> None:
    assert run_id(env, now=datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)) == expected


def test_session_name_defaults_to_local() -> None:
    assert session_name({}) == "local"
    assert session_name({"EVALJIG_SESSION": "tests"}) == "tests"


@pytest.mark.parametrize("value", ["..", ".", "../../etc", "", "///"])
def test_safe_segment_never_escapes(value: str) -> None:
    segment = safe_segment(value)
    assert segment not in {".", ".."}
    assert "/" not in segment
    assert segment


def test_case_dirname_is_unique_and_bounded() -> None:
    a = case_dirname("t.py::A", "case/1")
    b = case_dirname("t.py::A", "case_1")
    assert a != b
    assert len(case_dirname("t.py::A" * 50, "x" * 500)) <= 91
    assert "/" not in a
