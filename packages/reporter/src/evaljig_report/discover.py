"""Find every ``case.json`` under the merge inputs, one at a time, without following symlinks.

A folder holding ``case.json`` is a case (its other files are artifacts and are not
listed); any other folder is walked. Leftover temporary files are partial writes and are
reported, as are files that cannot be read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from evaljig_report.atomic import TMP_SUFFIX
from evaljig_report.layout import CASE_FILE, MERGED_DIR

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)
_CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class Found:
    """A case file and its bytes."""

    path: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Problem:
    """A file the merge could not use, and why."""

    path: str
    problem: str


def _read_case(folder: str) -> Found | Problem | None:
    path = f"{folder}{os.sep}{CASE_FILE}"
    try:
        fd = os.open(path, _READ_FLAGS)  # os-level I/O: this is the hot loop of a 100k-file merge
    except (FileNotFoundError, NotADirectoryError):
        return None
    except IsADirectoryError:
        return Problem(path, "is a directory, not a case file")
    except OSError as exc:
        return Problem(path, f"unreadable: {exc.strerror or exc}")
    try:
        chunks = [os.read(fd, _CHUNK)]
        while len(chunks[-1]) == _CHUNK:
            chunks.append(os.read(fd, _CHUNK))
    except OSError as exc:
        return Problem(path, f"unreadable: {exc.strerror or exc}")
    finally:
        os.close(fd)
    return Found(path, chunks[0] if len(chunks) == 1 else b"".join(chunks))


def _walk(folder: str, skip: frozenset[str]) -> Iterator[Found | Problem]:
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        yield Problem(folder, f"unreadable folder: {exc.strerror or exc}")
        return
    for entry in entries:
        if entry.name.startswith(".") and entry.name.endswith(TMP_SUFFIX):
            yield Problem(entry.path, "partial write: a temporary file was left behind")
        elif entry.name == CASE_FILE and entry.is_file(follow_symlinks=False):
            continue  # the folder itself is a case; handled by the caller
        elif entry.is_dir(follow_symlinks=False) and entry.name != MERGED_DIR and entry.path not in skip:
            found = _read_case(entry.path)
            if found is None:
                yield from _walk(entry.path, skip)
            else:
                yield found


def iter_cases(inputs: Iterable[Path], skip: Iterable[Path] = ()) -> Iterator[Found | Problem]:
    """Every case file under ``inputs`` (files or folders), in a stable order, plus problems."""
    skipped = frozenset(str(Path(p).absolute()) for p in skip)
    for given in inputs:
        root = Path(given).absolute()
        if root.is_file():
            if root.name == CASE_FILE:
                found = _read_case(str(root.parent))
                yield found if found is not None else Problem(str(given), "disappeared while reading")
            else:
                yield Problem(str(given), "not a case.json file or a folder")
        elif root.is_dir():
            found = _read_case(str(root))
            if found is None:
                yield from _walk(str(root), skipped)
            else:
                yield found
        else:
            yield Problem(str(given), "does not exist")
