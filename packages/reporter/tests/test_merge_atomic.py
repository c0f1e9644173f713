"""A merge's output folder is all or nothing: a failed merge leaves the previous one, concurrent merges take turns."""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import orjson
import pytest

from evaljig_report import _merge, merge
from evaljig_report._cli import main

from .report_samples import Populate, make_record


def digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def staging_left(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.merging-"))


@pytest.fixture
def two_runs(tmp_path: Path, populate: Populate) -> tuple[Path, Path]:
    """Two report trees with different case counts (150 and 151), so every output file tells which one it shows."""
    first = populate(tmp_path / "a", records=[make_record(f"a{n}") for n in range(150)])
    second = populate(tmp_path / "b", records=[make_record(f"b{n}", status="fail") for n in range(151)])
    return first, second


def full_disk(path: Path, *args: Any) -> None:
    """A writer that gets half its file written, then fails as a full disk does."""
    path.write_bytes(b"<!DOCTYPE html>\n<html><head>")
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


def test_a_full_disk_mid_merge_leaves_the_previous_output_untouched(
    tmp_path: Path, two_runs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = two_runs
    out = tmp_path / "out"
    assert main(["merge", str(first), "-o", str(out), "--no-step-summary"]) == 0
    before = digest(out)
    assert sorted(before) == ["index.json", "junit.xml", "report.html", "summary.md"]
    capsys.readouterr()
    monkeypatch.setattr(_merge, "write_html", full_disk)  # the last file a merge writes
    assert main(["merge", str(second), "-o", str(out), "--no-step-summary"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "No space left on device" in err
    assert digest(out) == before
    assert staging_left(out) == []


def test_a_failed_first_merge_leaves_no_output_folder(
    tmp_path: Path, two_runs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "new" / "out"
    monkeypatch.setattr(_merge, "write_junit", full_disk)
    with pytest.raises(OSError, match="No space left on device"):
        merge([two_runs[0]], out)
    assert not out.exists()
    assert staging_left(out) == []


def test_a_merge_holds_the_output_lock_while_it_writes(
    tmp_path: Path, two_runs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    seen: list[str] = []
    real = _merge.write_junit

    def probe(path: Path, rows: Any) -> None:
        fd = os.open(out.parent / ".out.lock", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append("free")
        except BlockingIOError:
            seen.append("held")
        finally:
            os.close(fd)
        real(path, rows)

    monkeypatch.setattr(_merge, "write_junit", probe)
    merge([two_runs[0]], out)
    assert seen == ["held"]


def outcome(out: Path) -> dict[str, int]:
    """How many cases each output file of ``out`` describes."""
    index = orjson.loads((out / "index.json").read_bytes())
    junit = ET.parse(out / "junit.xml").getroot()
    summary = (out / "summary.md").read_text(encoding="utf-8").splitlines()[0]
    html = (out / "report.html").read_text(encoding="utf-8")
    meta = html.split('<script type="application/json" id="evaljig-meta">', 1)[1].split("</script>", 1)[0]
    return {
        "index.json": index["totals"]["cases"],
        "index.json rows": len(index["cases"]),
        "junit.xml": int(junit.get("tests", "-1")),
        "summary.md": int(summary.removeprefix("## evaljig report: ").removesuffix(" cases")),
        "report.html": orjson.loads(meta)["totals"]["cases"],
    }


ROUNDS = 6


def test_concurrent_merges_into_one_folder_each_write_a_whole_output(
    tmp_path: Path, two_runs: tuple[Path, Path]
) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "SOURCE_DATE_EPOCH": "0"}
    for _ in range(ROUNDS):
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "evaljig_report", "merge", str(run), "-o", str(out), "--no-step-summary"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for run in two_runs
        ]
        errors = [p.communicate()[1] for p in procs]
        assert [p.returncode for p in procs] == [0, 0], errors
        counts = set(outcome(out).values())
        assert counts in ({150}, {151}), outcome(out)
        assert staging_left(out) == []
        assert sorted(p.name for p in out.iterdir()) == ["index.json", "junit.xml", "report.html", "summary.md"]


def test_a_folder_holding_anything_else_is_refused_untouched(
    tmp_path: Path, two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main(["merge", str(two_runs[0]), "-o", str(out), "--no-step-summary"]) == 2
    assert capsys.readouterr().err == (
        f"evaljig-report: {out}: holds 'notes.txt', which no merge wrote: a merge replaces its output folder whole, "
        "so it is not written; choose a new or empty folder with --out\n"
    )
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_a_killed_merges_staging_folder_is_removed_and_not_read(tmp_path: Path, two_runs: tuple[Path, Path]) -> None:
    first, _ = two_runs
    out = first / "merged"  # the default output, inside the input
    stale = first / ".merged.merging-99999-deadbeef.tmp"
    stale.mkdir()
    (stale / "index.json").write_text("{")
    result = merge([first], out)
    assert result.problems == []
    assert not stale.exists()
    assert len(result.rows) == 150
