"""A session named ``merged`` never disappears: the name is refused, and a merge reads such a folder like any other."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import pytest

from evaljig_report._cli import main
from evaljig_report._layout import session_name

from .report_samples import Populate, make_record, report_suite
from .test_plugin import EVAL_TESTS


def tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("name", ["merged", "Merged", "MERGED", " merged "])
def test_the_session_name_merged_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match=r"EVALJIG_SESSION=.*'merged' is reserved for a run's merged report folder"):
        session_name({"EVALJIG_SESSION": name})


def test_other_session_names_are_kept() -> None:
    assert session_name({"EVALJIG_SESSION": "merged-2"}) == "merged-2"
    assert session_name({"EVALJIG_SESSION": "tests"}) == "tests"
    assert session_name({}) == "local"


def test_pytest_with_evaljig_session_merged_is_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = report_suite(pytester, monkeypatch, test_evals=EVAL_TESTS)
    monkeypatch.setenv("EVALJIG_SESSION", "merged")
    result = suite.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*evaljig-report: EVALJIG_SESSION='merged': 'merged' is reserved*"])
    assert not (suite.path / "reports").exists()


@pytest.fixture
def run_with_merged_session(tmp_path: Path, populate: Populate) -> Path:
    """A run (written before the name was refused) whose session ``merged`` has two failing cases."""
    populate(session="tests", records=[make_record("ok")])
    failing = [make_record("bad1", status="fail", reason="wrong"), make_record("bad2", status="fail", reason="off")]
    return populate(session="merged", worker="main", records=[*failing, make_record("fine")])


def test_a_session_named_merged_is_read_by_a_merge_elsewhere(
    tmp_path: Path, run_with_merged_session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["merge", str(run_with_merged_session), "-o", str(out), "--no-step-summary"]) == 0
    index = orjson.loads((out / "index.json").read_bytes())
    assert index["totals"] == {"cases": 4, "pass": 2, "fail": 2, "error": 0, "skip": 0}
    assert index["sessions"]["merged"] == {"cases": 3, "pass": 1, "fail": 2, "error": 0, "skip": 0}
    assert "2 fail" in capsys.readouterr().out


def test_a_merge_never_replaces_a_session_named_merged(
    run_with_merged_session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default output, ``<run>/merged``, is that session's folder: refused, and left exactly as it was."""
    session = run_with_merged_session / "merged"
    before = tree_digest(session)
    assert main(["merge", str(run_with_merged_session), "--no-step-summary"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"evaljig-report: {session}: holds 'main', which no merge wrote (a session named 'merged'?")
    assert "choose a new or empty folder with --out" in err
    assert tree_digest(session) == before
