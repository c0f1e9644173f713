"""The noxfile is a table of contents: importing it changes nothing (no folder, no ``sys.path`` entry)."""

from __future__ import annotations

import ast
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
