"""Find every ``case.json`` under the merge inputs, one at a time, without following symlinks.

A folder holding ``case.json`` is a case (its other files are artifacts); any other folder is
walked, depth first with an explicit stack: a shard tree thousands of folders deep is walked to
the bottom (or listed as a problem where the system refuses the path), never a
``RecursionError``. A worker folder's ``collected.json`` (what the worker collected) is found too,
so a merge can tell which collected cases were never recorded. Each folder is listed once. What a
merge must not read is reported, never opened: leftover temporary files (partial writes),
symbolic links, and anything that is not a regular file or a folder (a FIFO would block the
merge forever). Files that cannot be read are reported too.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from evaljig_common import TMP_SUFFIX
from evaljig_report._layout import CASE_FILE, COLLECTED_FILE, INDEX_FILE

# No symlink, and no waiting on a FIFO swapped in after the listing was read.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_CHUNK = 1 << 16
#: Case files larger than this are listed as problems without being read (``--max-case-bytes``).
MAX_CASE_BYTES = 16 * 1024 * 1024
#: Case files nested deeper than this are problems: the report's own JSON (orjson stops at 255 levels)
#: wraps a case's values a few levels deeper, and nothing downstream may be the one to give up.
MAX_CASE_DEPTH = 200


@dataclass(frozen=True, slots=True)
class Found:
    """A case file and its bytes."""

    path: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Collected:
    """A worker's ``collected.json``, and whether the worker finished (wrote its ``index.json``)."""

    path: str
    data: bytes
    finished: bool


@dataclass(frozen=True, slots=True)
class Problem:
    """A file the merge could not use, and why."""

    path: str
    problem: str


def _read_file(path: str, limit: int = MAX_CASE_BYTES) -> Found | Problem:
    try:
        fd = os.open(path, _READ_FLAGS)  # os-level I/O: this is the hot loop of a 100k-file merge
    except FileNotFoundError:
        return Problem(path, "disappeared while reading")
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Problem(path, "symbolic link: not followed")
        return Problem(path, f"unreadable: {exc.strerror or exc}")
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            return Problem(path, f"too large: {size} bytes, over the {limit}-byte limit (--max-case-bytes); not read")
        chunks = [os.read(fd, _CHUNK)]
        while len(chunks[-1]) == _CHUNK:
            chunks.append(os.read(fd, _CHUNK))
    except OSError as exc:
        return Problem(path, f"unreadable: {exc.strerror or exc}")
    finally:
        os.close(fd)
    return Found(path, chunks[0] if len(chunks) == 1 else b"".join(chunks))


def _special_kind(entry: os.DirEntry[str]) -> str:
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except OSError:
        return "not a regular file"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"


def _stray(entry: os.DirEntry[str]) -> Problem | None:
    """A leftover temporary file, a symlink or a special file: listed, never read or followed."""
    if entry.name.startswith(".") and entry.name.endswith(TMP_SUFFIX):
        return Problem(entry.path, "partial write: a temporary file was left behind")
    if entry.is_symlink():
        return Problem(entry.path, "symbolic link: not followed")
    if not entry.is_file(follow_symlinks=False) and not entry.is_dir(follow_symlinks=False):
        return Problem(entry.path, f"{_special_kind(entry)}: not read")
    return None


def _case_folder(case: os.DirEntry[str], entries: list[os.DirEntry[str]], limit: int) -> list[Found | Problem]:
    """The case file, opened only once the listing shows a regular file, and what else is wrong in its folder."""
    found: list[Found | Problem] = []
    if len(entries) > 1:
        found += [p for e in entries if e is not case and (p := _stray(e)) is not None]
    if case.is_file(follow_symlinks=False):
        found.append(_read_file(case.path, limit))
    elif case.is_symlink():
        found.append(Problem(case.path, "symbolic link: not followed"))
    elif case.is_dir(follow_symlinks=False):
        found.append(Problem(case.path, "unreadable: a directory, not a case file"))
    else:
        found.append(Problem(case.path, f"unreadable: {_special_kind(case)}, not a regular file"))
    return found


def _list(folder: str) -> list[os.DirEntry[str]] | Problem:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError as exc:
        return Problem(folder, f"unreadable folder: {exc.strerror or exc}")


def _case_entry(entries: list[os.DirEntry[str]]) -> os.DirEntry[str] | None:
    for entry in entries:
        if entry.name == CASE_FILE:
            return entry
    return None


def _collected(entry: os.DirEntry[str], entries: list[os.DirEntry[str]], limit: int) -> Collected | Problem:
    found = _read_file(entry.path, limit)
    if isinstance(found, Problem):
        return found
    return Collected(found.path, found.data, finished=any(e.name == INDEX_FILE for e in entries))


def _walk(top: str, skip: frozenset[str], limit: int) -> Iterator[Found | Problem | Collected]:
    """``top`` and everything below it, depth first, folders in name order; each folder is listed once,
    and a case folder is not walked further (a folder's own files come before its subfolders').

    The pending folders are an explicit stack, so the depth of the tree costs memory, not Python
    stack frames. Callers sort what they collect, so nothing depends on this order beyond stability.
    """
    stack = [top]
    while stack:
        entries = _list(stack.pop())
        if isinstance(entries, Problem):
            yield entries
            continue
        if (case := _case_entry(entries)) is not None:
            yield from _case_folder(case, entries, limit)
            continue
        below: list[str] = []
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.path in skip:
                continue
            if (problem := _stray(entry)) is not None:
                yield problem
            elif entry.name == COLLECTED_FILE and entry.is_file(follow_symlinks=False):
                yield _collected(entry, entries, limit)
            elif entry.is_dir(follow_symlinks=False):
                below.append(entry.path)
        stack.extend(reversed(below))


def iter_cases(
    inputs: Iterable[Path], skip: Iterable[Path] = (), *, max_bytes: int = MAX_CASE_BYTES
) -> Iterator[Found | Problem | Collected]:
    """Every case file under ``inputs`` (files or folders), in a stable order, plus problems.

    A file over ``max_bytes`` is a problem and is never read into memory.

    A folder named as an input may be a symlink (e.g. ``reports -> /mnt/reports``); below it
    nothing is followed.
    """
    skipped = frozenset(str(Path(p).absolute()) for p in skip)
    for given in inputs:
        root = Path(given).absolute()
        if root.is_dir():
            yield from _walk(str(root), skipped, max_bytes)
        elif root.is_file() and root.name == CASE_FILE:
            found = _read_file(str(root), max_bytes)
            yield found if isinstance(found, Found) else Problem(str(given), found.problem)
        elif root.is_file():
            yield Problem(str(given), "not a case.json file or a folder")
        elif os.path.lexists(root):
            yield Problem(str(given), "not a regular file or a folder")
        else:
            yield Problem(str(given), "does not exist")
