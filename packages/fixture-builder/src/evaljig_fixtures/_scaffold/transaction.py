"""Write a set of files all or none: ``evaljig init`` never leaves a half-written scaffold.

Three steps: refuse a target that exists but is not a regular file (a folder named
``.gitignore``, a symlink); write every file's new content to a hidden temporary sibling
(creating missing folders); then rename each over its target. If anything fails on the way,
every file already renamed gets its previous content back (or is removed if it is new), the
temporary files and the folders this call created are removed, and the error is raised. What
is left is the tree as it was, whatever step failed; only a crash of the process itself between
two renames (a kill -9) could leave part of it, and a rerun with ``--force`` completes it.
"""

from __future__ import annotations

import contextlib
import stat
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from evaljig_common import write_bytes_atomic
from evaljig_fixtures._errors import EvaljigFixturesError

_TMP = ".evaljig-init.tmp"


def write_all(root: Path, files: Mapping[str, bytes]) -> None:
    """Write ``files`` (root-relative POSIX path -> bytes) under ``root``: every one, or none."""
    targets = {relative: root.joinpath(*PurePosixPath(relative).parts) for relative in sorted(files)}
    previous = {relative: _previous(relative, path) for relative, path in targets.items()}
    created: list[Path] = []
    staged: dict[str, Path] = {}
    renamed: list[str] = []
    try:
        for relative, path in targets.items():
            created += _make_parents(path.parent, root)
            tmp = path.with_name(f".{path.name}{_TMP}")
            tmp.write_bytes(files[relative])
            staged[relative] = tmp
        for relative, path in targets.items():
            staged[relative].replace(path)
            del staged[relative]
            renamed.append(relative)
    except BaseException:
        for tmp in staged.values():
            with contextlib.suppress(OSError):
                tmp.unlink()
        for relative in reversed(renamed):
            _restore(targets[relative], previous[relative])
        for folder in reversed(created):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _previous(relative: str, path: Path) -> bytes | None:
    """What ``path`` holds now (None: nothing); a target that is no regular file is refused before any write."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise EvaljigFixturesError(f"{relative}: a folder on its way is a file; move it away and rerun") from None
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a symlink" if stat.S_ISLNK(mode) else "not a regular file"
        raise EvaljigFixturesError(f"{relative}: exists and is {kind}, not a file init writes; move it away and rerun")
    return path.read_bytes()


def _make_parents(folder: Path, root: Path) -> list[Path]:
    """Create ``folder`` and its missing parents up to ``root``; the ones created, outermost first."""
    missing = []
    while folder != root and not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()
    return list(reversed(missing))


def _restore(path: Path, data: bytes | None) -> None:
    with contextlib.suppress(OSError):
        if data is None:
            path.unlink()
        else:
            write_bytes_atomic(path, data)
