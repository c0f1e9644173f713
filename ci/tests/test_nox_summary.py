"""`make matrix` / `make ci` end with a readable summary built from nox's --report JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ci import nox_summary

SCRIPT = Path(nox_summary.__file__)


def _venv(nox_dir: Path, folder: str, version: str) -> None:
    (nox_dir / folder).mkdir(parents=True)
    (nox_dir / folder / "pyvenv.cfg").write_text(f"home = /x\nimplementation = CPython\nversion_info = {version}\n")


def test_matrix_summary_names_every_python_it_ran(tmp_path: Path) -> None:
    _venv(tmp_path, "tests-3-11", "3.11.7")
    _venv(tmp_path, "tests-3-12", "3.12.1")
    report = {
        "result": 0,
        "sessions": [
            {"name": "tests", "signatures": ["tests-3.11"], "result": "success", "reason": None, "duration": 83.4},
            {"name": "tests", "signatures": ["tests-3.12"], "result": "success", "reason": None, "duration": 61.0},
            {
                "name": "tests",
                "signatures": ["tests-3.13"],
                "result": "failed",
                "reason": "Python interpreter 3.13 not found",
                "duration": 0.2,
            },
        ],
    }
    lines = nox_summary.summary(report, tmp_path, "make matrix")
    assert lines == [
        "==> make matrix",
        "  tests-3.11  success   1m23s  Python 3.11.7",
        "  tests-3.12  success   1m01s  Python 3.12.1",
        "  tests-3.13  failed       0s  Python -  (Python interpreter 3.13 not found)",
        "  2 of 3 sessions succeeded",
        "  tests passed on Python 3.11 (3.11.7), 3.12 (3.12.1); failed on 3.13",
    ]


def test_sessions_without_tests_get_no_python_line(tmp_path: Path) -> None:
    report = {"sessions": [{"name": "lint", "result": "success", "duration": 4}]}
    assert nox_summary.summary(report, tmp_path, "make lint")[-1] == "  1 of 1 sessions succeeded"
    assert nox_summary.summary({"sessions": []}, tmp_path, "x") == ["==> x: no session ran"]


def test_a_missing_or_broken_report_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    broken = tmp_path / "r.json"
    broken.write_text("{not json")
    for path in (broken, tmp_path / "missing.json"):
        done = subprocess.run([sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True, check=False)
        assert done.returncode == 1
        assert done.stderr.count("\n") == 1
        assert "no usable nox report" in done.stderr
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps({"sessions": [{"name": "lint", "result": "success", "duration": 1}]}))
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(ok), "make lint"], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[0] == "==> make lint"


def test_each_session_shows_its_cpu_and_the_total_bounds_the_wall_time(tmp_path: Path) -> None:
    report = {
        "sessions": [
            {"name": "lint", "result": "success", "duration": 4},
            {"name": "tests", "signatures": ["tests-3.11"], "result": "success", "duration": 299},
            {"name": "coverage", "result": "success", "duration": 6},
        ]
    }
    cpu_file = tmp_path / "cpu.json"
    cpu_file.write_text(json.dumps({"invocation": "1-2", "sessions": {"lint": 7.9, "tests-3.11": 1204.2}}))
    cpu = nox_summary.session_cpu(cpu_file)
    lines = nox_summary.summary(report, tmp_path, "make ci", cpu=cpu, cores=2)
    assert lines[1:5] == [
        "  lint        success      4s       8 s CPU  Python -",
        "  tests-3.11  success   4m59s   1,204 s CPU  Python -",
        "  coverage    success      6s  Python -",  # nothing recorded for it: no column
        "  3 of 3 sessions succeeded",
    ]
    assert lines[5] == "  CPU: 1,212 s in the sessions' processes; on 2 core(s) no less than 10m06s of wall time"


def test_a_missing_or_broken_cpu_file_shows_no_cpu(tmp_path: Path) -> None:
    broken = tmp_path / "cpu.json"
    broken.write_text('{"sessions": ["not", "a", "mapping"]}')
    assert nox_summary.session_cpu(broken) == {}
    assert nox_summary.session_cpu(tmp_path / "missing.json") == {}
    assert nox_summary.session_cpu(None) == {}
