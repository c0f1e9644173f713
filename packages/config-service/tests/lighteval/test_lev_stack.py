"""The installed lighteval stack can run offline: ``evaljig-config lighteval check`` against the real one.

The second case plants a ``soundfile`` that cannot load its native library (what the pure
wheel does on a machine without libsndfile, as the stack once had): transformers imports it
whenever it is installed, so every lighteval run would crash at import; the check must say so
in one line naming the package and the library.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.lighteval

MISSING_LIBRARY = "libsndfile-evaljig-missing.so"


def check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evaljig_config", "lighteval", "check"],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip


def test_lev_stack_imports_everything_a_run_reaches_offline() -> None:
    done = check({k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("lighteval stack ok:"), done.stdout


def test_lev_stack_with_a_soundfile_missing_its_library_fails_the_check(tmp_path: Path) -> None:
    (tmp_path / "soundfile.py").write_text(f"import ctypes\n_snd = ctypes.CDLL({MISSING_LIBRARY!r})\n")
    done = check({**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 1
    failed = [line for line in done.stderr.splitlines() if line.startswith("evaljig-config: lighteval stack check")]
    assert failed == [
        "evaljig-config: lighteval stack check failed: importing soundfile (imported by transformers.audio_utils "
        f"when installed): package soundfile cannot load the native library {MISSING_LIBRARY}; install a wheel of it "
        "that bundles the library (a manylinux wheel) or the system library, then rebuild the stack"
    ], done.stderr
