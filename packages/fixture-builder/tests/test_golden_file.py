"""``assert_golden_file``: a golden that differs from this run fails with the difference and the command that
rebuilds it (what changed, where, and the fix), never a bare ``assert a == b``."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaljig_fixtures import assert_golden_file

TABLE = "| Task |Version|Metric|Value |\n|------|-------|------|-----:|\n|mini|0|em|0.6905|\n"
REBUILD = "cd evals && python scripts/build_lighteval_fixture.py --only cli-stdout-golden"


def test_the_same_text_passes(tmp_path: Path) -> None:
    golden = tmp_path / "expected-cli-stdout.txt"
    golden.write_text(TABLE, encoding="utf-8")
    assert_golden_file(TABLE, golden, rebuild=REBUILD)


def test_a_changed_table_shows_the_lines_that_changed_and_the_command(tmp_path: Path) -> None:
    golden = tmp_path / "expected-cli-stdout.txt"
    golden.write_text(TABLE, encoding="utf-8")

    with pytest.raises(AssertionError) as caught:
        assert_golden_file(TABLE.replace("0.6905", "0.7143"), golden, rebuild=REBUILD)

    message = str(caught.value)
    assert message.startswith(f"{golden} differs from this run (- committed, + this run):")
    assert "  -|mini|0|em|0.6905|" in message.splitlines()
    assert "  +|mini|0|em|0.7143|" in message.splitlines()
    assert message.endswith(f"rebuild it with `{REBUILD}`, review the diff and commit it.")


def test_a_long_difference_is_cut(tmp_path: Path) -> None:
    golden = tmp_path / "expected.txt"
    golden.write_text("".join(f"line {i}\n" for i in range(200)), encoding="utf-8")

    with pytest.raises(AssertionError) as caught:
        assert_golden_file("".join(f"row {i}\n" for i in range(200)), golden, rebuild=REBUILD)

    assert "more diff lines" in str(caught.value)
    assert len(str(caught.value).splitlines()) < 50


def test_a_missing_golden_names_the_command_that_builds_it(tmp_path: Path) -> None:
    missing = tmp_path / "configs" / "expected-cli-stdout.txt"

    with pytest.raises(AssertionError) as caught:
        assert_golden_file(TABLE, missing, rebuild=REBUILD)

    assert str(caught.value) == f"{missing} is missing: build it with `{REBUILD}`, review it and commit it"
