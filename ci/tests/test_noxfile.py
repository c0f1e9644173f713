"""The noxfile is a table of contents: importing it changes nothing (no folder, no ``sys.path`` entry)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import os, runpy, sys
before_path, before_cwd = list(sys.path), os.getcwd()
reports = {reports!r}
before = sorted(os.listdir(reports)) if os.path.isdir(reports) else None
namespace = runpy.run_path({noxfile!r})
after = sorted(os.listdir(reports)) if os.path.isdir(reports) else None
assert sys.path == before_path, set(sys.path) ^ set(before_path)
assert os.getcwd() == before_cwd
assert before == after, (before, after)
print(namespace["PYTHONS"], namespace["PYTHON"])
"""


def test_importing_the_noxfile_has_no_side_effects() -> None:
    probe = PROBE.format(reports=str(ROOT / "reports"), noxfile=str(ROOT / "noxfile.py"))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("] ")[1].strip() == "3.11", "the default session Python is the oldest classifier"
    assert done.stdout.startswith("['3.11', '3.12', '3.13']")


def test_every_session_that_starts_python_processes_lets_them_write_bytecode() -> None:
    """With PYTHONDONTWRITEBYTECODE set, pytest re-rewrites every plugin and test module in each process."""
    probe = (
        "import runpy, types\n"
        "from nox.command import _clean_env\n"
        f"namespace = runpy.run_path({str(ROOT / 'noxfile.py')!r})\n"
        "session = types.SimpleNamespace(env={})\n"
        "namespace['writes_bytecode'](session)\n"
        "print(sorted(_clean_env({'PYTHONDONTWRITEBYTECODE': '1', **session.env}) or {}))\n"
    )  # in its own process: running the noxfile registers its sessions with nox
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    calling = {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any(isinstance(n, ast.Name) and n.id == "writes_bytecode" for n in ast.walk(node))
        and node.name != "writes_bytecode"
    }
    assert calling >= {"tests", "snapshots", "bench", "package", "lighteval", "regen", "adoption", "clients"}


def run_probe(probe: str, path: Path) -> str:
    """``python -c probe path`` in the checkout (the noxfile imported by ``runpy``); its stdout."""
    done = subprocess.run(
        [sys.executable, "-c", probe, str(path)], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_session_records_its_cpu_for_the_summary(tmp_path: Path) -> None:
    """``make``'s summary prints each session's CPU: every session is declared through ``session_with_cpu``."""
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    declared = {
        node.name: [ast.unparse(d.func) for d in node.decorator_list if isinstance(d, ast.Call)]
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and any(isinstance(d, ast.Call) for d in node.decorator_list)
    }
    assert declared, "no session found"
    assert {name: how for name, how in declared.items() if how != ["session_with_cpu"]} == {}
    cpu = tmp_path / "cpu.json"
    probe = (
        "import json, runpy, sys\n"
        f"record = runpy.run_path({str(ROOT / 'noxfile.py')!r})['_record_cpu']\n"
        "path = __import__('pathlib').Path(sys.argv[1])\n"
        "record('lint', 4.04, path, 'one'); record('tests-3.11', 512.26, path, 'one')\n"
        "print(json.dumps(json.loads(path.read_text())))\n"
        "record('lint', 3.0, path, 'two')\n"
        "print(json.dumps(json.loads(path.read_text())))\n"
    )
    first, second = (json.loads(line) for line in run_probe(probe, cpu).splitlines())
    assert first == {"invocation": "one", "sessions": {"lint": 4.0, "tests-3.11": 512.3}}
    assert second == {"invocation": "two", "sessions": {"lint": 3.0}}  # another nox invocation starts afresh
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cpu.json"]  # no partial file left


def test_a_session_whose_cpu_cannot_be_recorded_still_succeeds(tmp_path: Path) -> None:
    """The CPU figure is for the summary: an unwritable ``.tools/`` warns, it never fails the session."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    probe = (
        "import runpy, sys, types\n"
        f"namespace = runpy.run_path({str(ROOT / 'noxfile.py')!r})\n"
        "ran, warned = [], []\n"
        "session = types.SimpleNamespace(name='lint', warn=warned.append)\n"
        "def work(session): ran.append(session.name)\n"
        "counted = namespace['session_with_cpu']()(work)\n"
        "counted.func.__globals__['SESSION_CPU'] = __import__('pathlib').Path(sys.argv[1]) / 'cpu.json'\n"
        "counted.func(session)\n"
        "print(ran, len(warned), 'could not record' in warned[0])\n"
    )
    assert run_probe(probe, blocker).strip() == "['lint'] 1 True"
