"""A merge's output folder is written as one unit, by one merge at a time.

Every file goes into a hidden staging folder beside the output, ``.<out>.merging-<pid>-<hex>.tmp``;
only once all of them are written does the staging folder take the output's place (on Linux
one ``renameat2(RENAME_EXCHANGE)``, so the folder is old or new at every instant; elsewhere
two renames, with the folder briefly missing, never mixed). A merge that fails (a full disk,
an interrupt) removes its staging folder and leaves the previous output as it was.

Merges into one folder take turns: each holds an exclusive ``flock`` on ``.<out>.lock`` beside
the output from before it reads its inputs until its output is in place, so a second merge
waits and then writes a whole output of its own. The lock file is left in place (removing it
would let a third merge lock a new file while the second still holds the old one). Staging
folders a killed merge left behind are removed by the next merge into the same folder.

The output folder is replaced whole, so a folder holding anything a merge does not write (a
session's reports, say, for a session named ``merged``) is refused, never replaced.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path

from evaljig_common import TMP_SUFFIX, EvaljigError, exclusive_lock
from evaljig_common import exchange_paths as _exchange
from evaljig_report._layout import HTML_FILE, INDEX_FILE, JUNIT_FILE, SUMMARY_FILE

#: What a merge writes into its output folder, and all that folder may hold for a merge to replace it.
OUTPUT_FILES = frozenset({INDEX_FILE, SUMMARY_FILE, HTML_FILE, JUNIT_FILE})


class MergeError(EvaljigError, ValueError):
    """A merge refused to write its output folder; names the folder and why."""


def lock_path(out_dir: Path) -> Path:
    return out_dir.parent / f".{out_dir.name}.lock"


def staging_paths(out_dir: Path) -> list[Path]:
    """Staging folders of merges into ``out_dir`` (only ever more than the current one after a crash)."""
    return sorted(out_dir.parent.glob(f".{glob.escape(out_dir.name)}.merging-*{TMP_SUFFIX}"))


def merge_lock(out_dir: Path) -> AbstractContextManager[None]:
    """Hold the exclusive lock of ``out_dir``, waiting for a merge into it that holds it now."""
    return exclusive_lock(lock_path(out_dir))


def check_replaceable(out_dir: Path) -> None:
    """Raise ``MergeError`` unless ``out_dir`` is missing, empty, or holds only what a merge writes."""
    if out_dir.exists() and not out_dir.is_dir():
        raise MergeError(f"{out_dir}: not a folder: a merge writes a folder of its own (choose another --out)")
    if not out_dir.exists():
        return
    for entry in sorted(out_dir.iterdir()):
        name = entry.name
        if name in OUTPUT_FILES or (name.startswith(".") and name.endswith(TMP_SUFFIX)):
            continue
        hint = f" (a session named {out_dir.name!r}? its reports are here)" if entry.is_dir() else ""
        raise MergeError(
            f"{out_dir}: holds {name!r}, which no merge wrote{hint}: a merge replaces its output folder whole, "
            "so it is not written; choose a new or empty folder with --out"
        )


def remove_stale_staging(out_dir: Path) -> None:
    """Remove staging folders of ``out_dir`` that killed merges left behind; call under :func:`merge_lock`."""
    for stale in staging_paths(out_dir):
        shutil.rmtree(stale, ignore_errors=True)


@contextmanager
def staged_output(out_dir: Path) -> Iterator[Path]:
    """A new staging folder for ``out_dir``'s files; put in ``out_dir``'s place when the block ends without error."""
    stage = out_dir.parent / f".{out_dir.name}.merging-{os.getpid()}-{secrets.token_hex(4)}{TMP_SUFFIX}"
    stage.mkdir()
    try:
        yield stage
        _put_in_place(stage, out_dir)
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)


def _put_in_place(stage: Path, out_dir: Path) -> None:
    if not out_dir.exists():
        stage.rename(out_dir)
    elif _exchange(stage, out_dir):
        return  # ``stage`` now holds the previous output, removed by the caller
    else:
        old = stage.with_name(stage.name.removesuffix(TMP_SUFFIX) + f"-old{TMP_SUFFIX}")
        out_dir.rename(old)
        stage.rename(out_dir)
        shutil.rmtree(old, ignore_errors=True)


def remove_if_empty(folder: Path) -> None:
    """Undo ``mkdir`` of an output folder a failed merge created (it is left alone if anything is in it)."""
    with suppress(OSError):
        folder.rmdir()
