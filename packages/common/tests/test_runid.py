"""Run ids: an explicit id is shared on purpose, a timestamp id is claimed by one run only."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from evaljig_common import claim_run, explicit_run_id, run_id, safe_segment

NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


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
    assert run_id(env, now=NOW) == expected


def test_explicit_run_id_is_none_without_one() -> None:
    assert explicit_run_id({}) is None
    assert explicit_run_id({"EVALJIG_RUN": ""}) is None
    assert explicit_run_id({"EVALJIG_RUN": "../../etc"}) == "etc"


@pytest.mark.parametrize("value", ["..", ".", "../../etc", "", "///", ".hidden", "a" * 500])
def test_safe_segment_never_escapes(value: str) -> None:
    segment = safe_segment(value)
    assert segment not in {".", ".."}
    assert "/" not in segment
    assert not segment.startswith(".")
    assert 0 < len(segment) <= 64


def test_safe_segment_keeps_safe_names_and_uses_the_fallback() -> None:
    assert safe_segment("tests-3.11") == "tests-3.11"
    assert safe_segment("", fallback="local") == "local"
    assert safe_segment("abcdef", limit=3) == "abc"


def test_two_runs_in_the_same_second_get_different_folders(tmp_path: Path) -> None:
    first, second = claim_run(tmp_path, {}, NOW), claim_run(tmp_path, {}, NOW)
    assert (first, second) == ("20250102T030405Z", "20250102T030405Z-2")
    assert sorted(p.name for p in tmp_path.iterdir()) == [first, second]
    assert claim_run(tmp_path, {"EVALJIG_RUN": "shared"}, NOW) == "shared"  # an explicit id is shared on purpose
    assert not (tmp_path / "shared").exists(), "an explicit run's folder is made by whoever reports into it"


def test_claiming_gives_up_with_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("evaljig_common._runid._MAX_CLAIMS", 2)
    claim_run(tmp_path, {}, NOW)
    claim_run(tmp_path, {}, NOW)
    with pytest.raises(FileExistsError, match=r"2 run folders named 20250102T030405Z\* already exist"):
        claim_run(tmp_path, {}, NOW)
