"""Benchmark: a console script started normally vs forked from the lighteval preload server.

The stand-in script imports what this venv has of the server's preload list (litellm,
pydantic, rich, aiohttp, ...; torch and sklearn live only in the lighteval stack), the way
``lighteval`` does on start. Prints the wall seconds per run on each path (one after another,
after a first forked run that waits for the server's imports) and their ratio; it never
asserts on time. In the stack (``.nox/lighteval-stack/bin/python bench_preload.py``)
the same script measures the full preload list. Usage: ``python bench_preload.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evaljig_config._preload import client_argv, serving
from evaljig_config._preload_server import PRELOAD_MODULES

SCRIPT = """#!{python}
import importlib
for name in {modules!r}:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
"""


def _seconds_per_run(argv: list[str], env: dict[str, str], runs: int) -> float:
    started = time.perf_counter()
    for _ in range(runs):
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, process_group=0)
    return (time.perf_counter() - started) / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    present = [name for name in PRELOAD_MODULES if importlib.util.find_spec(name.split(".")[0]) is not None]
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "stand-in-cli"
        script.write_text(SCRIPT.format(python=sys.executable, modules=present), encoding="utf-8")
        script.chmod(0o755)
        with serving() as env:
            forked = client_argv([str(script)], env)
            first = _seconds_per_run(forked, env, 1)  # waits for the server's imports
            forked_s = _seconds_per_run(forked, env, args.runs)
            exec_s = _seconds_per_run([str(script)], env, args.runs)
    print(f"preload: {len(present)} of {len(PRELOAD_MODULES)} modules present: {', '.join(present)}")
    print(f"  exec'd run        {exec_s:6.2f} s per run")
    print(f"  forked run        {forked_s:6.2f} s per run (the first one, waiting for the imports: {first:.2f} s)")
    print(f"  ratio forked/exec'd: {forked_s / exec_s:.2f}x over {args.runs} run(s) each")


if __name__ == "__main__":
    main()
