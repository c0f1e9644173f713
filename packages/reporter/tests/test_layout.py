from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from unittest.mock import MagicMock

import pytest

from evaljig_common import run_id
from evaljig_report._layout import case_dirname, session_name


def test_session_name_defaults_to_local() -> None:
    assert session_name({}) == "local"
    assert session_name({"EVALJIG_SESSION": "tests"}) == "tests"


def test_case_dirname_is_unique_and_bounded() -> None:
    a = case_dirname("t.py::A", "case/1")
    b = case_dirname("t.py::A", "case_1")
    assert a != b
    assert len(case_dirname("t.py::A" * 50, "x" * 500)) <= 91
    assert "/" not in a


def test_two_pytest_runs_in_the_same_second_get_different_folders(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    monkeypatch.setenv("EVALJIG_ALL_TESTS", "1")
    monkeypatch.setattr("evaljig_common._runid.run_id", lambda env=None, now=None: "20250102T030405Z")
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    runs = sorted(p.name for p in (pytester.path / "reports").iterdir())
    assert runs == ["20250102T030405Z", "20250102T030405Z-2"]


def test_the_noxfile_derives_run_ids_with_the_plugins_helper(monkeypatch: pytest.MonkeyPatch) -> None:
    """The noxfile and the plugin name a run alike: both take the helper from ``evaljig_common``."""
    nox = MagicMock()  # nox itself is not installed in the test venv
    monkeypatch.setitem(sys.modules, "nox", nox)
    monkeypatch.setitem(sys.modules, "nox.command", nox.command)
    monkeypatch.setenv("EVALJIG_RUN", "team run #1/../x")
    noxfile = Path(__file__).parents[3] / "noxfile.py"
    spec = importlib.util.spec_from_file_location("_noxfile_under_test", noxfile)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.run.cache_info().currsize == 0  # importing it (nox -l) claims no run folder
    assert module.run() == run_id() == "team_run_1_.._x"
