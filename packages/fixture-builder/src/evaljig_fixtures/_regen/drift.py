"""Byte-for-byte comparison of a rebuilt fixtures folder with the committed one, and its listing.

``added``: in the committed folder but not rebuilt; ``missing``: rebuilt but not committed;
``changed``: both, with different bytes. Text gets a short unified diff, binaries size + sha256.

Nothing on disk is trusted: a fixture is a regular, non-executable file in real folders. A
committed path that is a symlink (or lies below one), or is no regular file (a FIFO, a
device), is ``symlink``/``special`` drift whatever it points at, and an executable bit is
``mode`` drift: the bytes a symlink leads to are never read as the fixture's.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import os
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_DIFF_LINES = 40
_EXEC_BITS = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


@dataclass(frozen=True, slots=True)
class Drift:
    kind: str  # "added" | "missing" | "changed" | "mode" | "symlink" | "special"
    path: str
    committed: bytes | None
    rebuilt: bytes | None
    detail: str = ""
    """For ``symlink``/``special``/``mode``: what the committed entry is (``-> target``, ``a FIFO``, ...)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """What a committed path is, read without following any symlink below the fixtures folder."""

    kind: str  # "absent" | "file" | "symlink" | "special"
    data: bytes | None = None
    executable: bool = False
    detail: str = ""


def list_files(root: Path) -> set[str]:
    """Relative POSIX paths of every non-folder entry under ``root`` (symlinks too, never followed)."""
    if not root.is_dir() or root.is_symlink():
        return set()
    found = set()
    for folder, dirs, names in os.walk(root):  # followlinks=False: a symlinked folder is listed, not entered
        base = Path(folder)
        for name in [*dirs, *names]:
            path = base / name
            if name in dirs and not path.is_symlink():
                continue
            found.add(path.relative_to(root).as_posix())
    return found


def entry(root: Path, relative: str) -> Entry:
    """The committed entry at ``root/relative``; a symlink on the way (``root`` excluded) is never followed."""
    parts = PurePosixPath(relative).parts
    path = root
    for depth, part in enumerate(parts, start=1):
        path = path / part
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:
            return Entry("absent")
        except NotADirectoryError:
            return Entry("absent")
        if stat.S_ISLNK(mode):
            where = "" if depth == len(parts) else f"its folder {'/'.join(parts[:depth])} "
            return Entry("symlink", detail=f"{where}is a symlink to {path.readlink()}")
        if depth < len(parts):
            if not stat.S_ISDIR(mode):
                return Entry("absent")
            continue
        if stat.S_ISDIR(mode):
            return Entry("absent")
        if not stat.S_ISREG(mode):
            return Entry("special", detail=f"is not a regular file ({_file_type(mode)})")
        return Entry("file", data=_read_nofollow(path), executable=bool(mode & _EXEC_BITS))
    return Entry("absent")


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device")):
        if test(mode):
            return name
    return "a block device" if stat.S_ISBLK(mode) else f"mode {stat.filemode(mode)}"


def _read_nofollow(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def read(root: Path, relative: str) -> bytes | None:
    """A committed fixture's bytes; ``None`` when it is absent or no regular file in real folders."""
    return entry(root, relative).data


def compare(relative: str, committed: bytes | Entry | None, rebuilt: bytes | None) -> Drift | None:
    """The drift of one path: its committed entry (or bytes) against this run's rebuilt bytes."""
    found = committed if isinstance(committed, Entry) else Entry("absent" if committed is None else "file", committed)
    if found.kind in ("symlink", "special"):
        return Drift(found.kind, relative, None, rebuilt, found.detail)
    if found.data == rebuilt:
        if found.executable and rebuilt is not None:
            return Drift("mode", relative, found.data, rebuilt, "is executable (a fixture never is)")
        return None
    kind = "missing" if found.data is None else "added" if rebuilt is None else "changed"
    return Drift(kind, relative, found.data, rebuilt)


def unsafe_entries(root: Path) -> list[str]:
    """Every symlink and non-regular file at or below ``root``, as ``path is ...`` (what regen refuses to write)."""
    if root.is_symlink():
        return [f"{root} is a symlink to {root.readlink()}"]
    problems = []
    for relative in sorted(list_files(root)):
        found = entry(root, relative)
        if found.kind in ("symlink", "special"):
            problems.append(f"{root / relative} {found.detail}")
    return problems


def _fingerprint(data: bytes | None) -> str:
    if data is None:
        return "unreadable"
    return f"{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}"


def _text(data: bytes) -> str | None:
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _zip_members(data: bytes) -> dict[str, int] | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return {i.filename: i.CRC for i in archive.infolist()}
    except (zipfile.BadZipFile, ValueError):
        return None


def render(drift: Drift) -> list[str]:
    """The listing lines for one drifted file."""
    if drift.kind in ("symlink", "special", "mode"):
        return [f"{drift.kind:<8} {drift.path}  ({drift.detail}; a fixture is a regular, non-executable file)"]
    if drift.kind == "added":
        return [f"added    {drift.path}  (committed, but no builder produces it: {_fingerprint(drift.committed)})"]
    if drift.kind == "missing":
        return [f"missing  {drift.path}  (rebuilt, but not in the committed folder: {_fingerprint(drift.rebuilt)})"]
    lines = [f"changed  {drift.path}"]
    if drift.committed is None or drift.rebuilt is None:
        return lines
    old, new = _text(drift.committed), _text(drift.rebuilt)
    if old is not None and new is not None:
        diff = list(
            difflib.unified_diff(
                old.splitlines(), new.splitlines(), f"committed/{drift.path}", f"rebuilt/{drift.path}", lineterm=""
            )
        )
        lines += [f"  {line}" for line in diff[:MAX_DIFF_LINES]]
        if len(diff) > MAX_DIFF_LINES:
            lines.append(f"  ... {len(diff) - MAX_DIFF_LINES} more diff lines")
        return lines
    lines += [f"  committed: {_fingerprint(drift.committed)}", f"  rebuilt:   {_fingerprint(drift.rebuilt)}"]
    old_members, new_members = _zip_members(drift.committed), _zip_members(drift.rebuilt)
    if old_members is not None and new_members is not None:
        differ = sorted(n for n in old_members.keys() | new_members.keys() if old_members.get(n) != new_members.get(n))
        lines.append(f"  zip members that differ: {', '.join(differ) or 'none (only the zip encoding)'}")
    return lines
