"""``exclusive_lock``: one holder at a time across processes, on a folder or a lock file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from evaljig_common import exclusive_lock

TRY_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    print("held")
else:
    print("free")
"""


def other_process_sees(path: Path) -> str:
    done = subprocess.run([sys.executable, "-c", TRY_LOCK, str(path)], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_a_lock_file_is_created_and_held_only_inside_the_block(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    with exclusive_lock(lock):
        assert lock.is_file()
        assert other_process_sees(lock) == "held"
    assert other_process_sees(lock) == "free"


def test_a_folder_is_locked_as_it_is(tmp_path: Path) -> None:
    with exclusive_lock(tmp_path):
        assert other_process_sees(tmp_path) == "held"
    assert list(tmp_path.iterdir()) == []
    assert other_process_sees(tmp_path) == "free"
