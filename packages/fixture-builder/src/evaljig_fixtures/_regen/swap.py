"""Replace a whole folder at once: stage its new content beside it, then swap the two.

Everything lives in one work folder next to the target (same filesystem, so renames are atomic)::

    .<name>.regen/new/    the complete new content, staged first
    .<name>.regen/READY   written once new/ is complete and on disk; holds new/'s inode number
    .<name>.regen/old/    the previous content (only where the swap needs two renames)

On Linux the swap is one ``renameat2(RENAME_EXCHANGE)``: the target is fully old or fully new at
every instant. Elsewhere it is two renames, with the target missing in between. An interrupt
(SIGINT, SIGTERM, a crash, a full disk) at any step is repaired by ``recover``, which every rerun
calls first: without READY it discards the staging (rolls back); with READY it finishes the swap
(rolls forward), knowing from the inode whether the target already is the new content.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from evaljig_common import exchange_paths as _exchange
from evaljig_common import write_bytes_atomic
from evaljig_fixtures._errors import BuildError

READY = "READY"
#: The steps of a swap, in order; ``on_step`` hears each name just before that step runs.
STEPS = ("stage", "mark-ready", "exchange", "move-old-aside", "move-new-in", "unmark", "remove-old")

OnStep = Callable[[str], None]


def work_dir(target: Path) -> Path:
    """The work folder beside ``target`` (hidden, and named after it so two targets never share one)."""
    return target.parent / f".{target.name}.regen"


def pending(target: Path) -> bool:
    """Whether an interrupted swap of ``target`` waits for ``recover``."""
    return work_dir(target).exists()


def _fsync_dir(folder: Path) -> None:
    """Make renames and new entries in ``folder`` durable (a crash must not undo a step already taken)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(root: Path) -> None:
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            if not path.is_symlink():
                with path.open("rb") as handle:
                    os.fsync(handle.fileno())
        _fsync_dir(Path(folder))


def stage(target: Path, apply: Callable[[Path], None], on_step: OnStep | None = None) -> None:
    """Copy ``target`` to ``new/``, let ``apply`` change the copy, then mark it READY.

    Until READY exists nothing of ``target`` has changed; an exception here removes the staging.
    """
    work = work_dir(target)
    if work.exists():
        raise BuildError(f"{work} exists: an interrupted regen must be recovered first")
    new = work / "new"
    try:
        _step(on_step, "stage")
        work.mkdir(parents=True)
        if target.exists():
            shutil.copytree(target, new, symlinks=True)
        else:
            new.mkdir()
        apply(new)
        _fsync_tree(new)
        _step(on_step, "mark-ready")
        write_bytes_atomic(work / READY, f"{new.stat().st_ino}\n".encode())
        _fsync_dir(work)
    except BaseException:
        if not (work / READY).exists():
            shutil.rmtree(work, ignore_errors=True)
        raise


def swap(target: Path, on_step: OnStep | None = None) -> None:
    """Put ``new/`` in place of ``target`` (READY must exist), then remove the old content and the work folder."""
    work = work_dir(target)
    old, new = work / "old", work / "new"
    staged = int((work / READY).read_text(encoding="ascii"))
    if not (target.exists() and target.stat().st_ino == staged):
        if not (new.exists() and new.stat().st_ino == staged):
            raise BuildError(f"cannot finish the swap: {new} is not the staged content; inspect {work} by hand")
        if target.exists():
            _step(on_step, "exchange")
            if _exchange(target, new):
                new.rename(old)  # new/ now holds the old content: name it so
            else:
                _step(on_step, "move-old-aside")
                target.rename(old)
                _fsync_dir(work)
                _step(on_step, "move-new-in")
                new.rename(target)
        else:
            _step(on_step, "move-new-in")
            new.rename(target)
        _fsync_dir(target.parent)
        _fsync_dir(work)
    _step(on_step, "unmark")
    (work / READY).unlink()
    _step(on_step, "remove-old")
    shutil.rmtree(work)


def recover(target: Path) -> str | None:
    """Finish or roll back an interrupted swap of ``target``; says which, or None when there was none."""
    work = work_dir(target)
    if not work.exists():
        return None
    if (work / READY).exists():
        swap(target)
        return f"finished an interrupted regen of {target} (its staged content was complete)"
    finished = not (work / "new").exists()
    shutil.rmtree(work)
    if finished:
        return f"removed what an interrupted regen of {target} left behind (its new content was in place)"
    return f"rolled back an interrupted regen of {target} (its staging was incomplete)"


def _step(on_step: OnStep | None, name: str) -> None:
    if on_step is not None:
        on_step(name)
