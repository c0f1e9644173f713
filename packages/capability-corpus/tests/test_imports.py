"""Importing the corpus, its checks and its command line stays light: httpx, never the eval stack.

Checked in a fresh interpreter, since this test session itself has litellm, uvicorn and vcrpy loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("litellm", "uvicorn", "vcr", "evaljig_fixtures", "evaljig_config", "evaljig_gateway")
MODULES = [
    "evaljig_corpus",
    "evaljig_corpus._cli",
    "evaljig_corpus._conformance",
    "evaljig_corpus._corpus_run",
    "evaljig_corpus._loader",
    "evaljig_corpus.strict_json",
]


def _loaded_after_import(module: str) -> list[str]:
    code = f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    loaded: list[str] = json.loads(proc.stdout)
    return loaded


@pytest.mark.parametrize("module", MODULES)
def test_importing_loads_nothing_heavy(module: str) -> None:
    loaded = _loaded_after_import(module)
    assert module in loaded
    assert not [name for name in loaded if name.split(".")[0] in HEAVY]


def test_the_check_can_fail() -> None:
    """The same check on the gateway's server, which does load uvicorn: the test above can see it."""
    loaded = _loaded_after_import("evaljig_gateway._server")
    assert {"litellm", "uvicorn"} & {name.split(".")[0] for name in loaded}
