"""Load a dataset package zip and trust nothing in it until the manifest vouches for every byte."""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any

from evaljig_corpus.strict_json import JsonInputError, duplicates, loads, loads_bytes
from evaljig_fixtures._datasets.contents import content_problems
from evaljig_fixtures._datasets.extract import UnsafeDestinationError, write_below
from evaljig_fixtures._datasets.manifest import ANSWER_KEY_MEMBER, MANIFEST, ROWS_MEMBER, manifest_problems
from evaljig_fixtures._errors import DatasetPackageError

MAX_TOTAL_BYTES = 64 * 1024 * 1024
"""Fixture packages are kilobytes; anything near this is a zip bomb or the wrong file."""
MAX_ZIP_BYTES = MAX_TOTAL_BYTES
"""The zip file itself: checked before it is read, and never read past."""
READ_CHUNK = 64 * 1024
"""A member is inflated this much at a time, never all at once (zipfile's ``read`` inflates a whole member)."""
MAX_LISTED = 20
"""At most this many problems are listed one by one in an error about a zip's members."""


@dataclass(frozen=True, slots=True)
class DatasetPackage:
    """A verified package: its manifest, member bytes, rows and answer key, all in memory."""

    source: Path
    manifest: Mapping[str, Any]
    members: Mapping[str, bytes]
    rows: tuple[dict[str, Any], ...]
    answer_key: Mapping[str, str]

    @property
    def name(self) -> str:
        return str(self.manifest["name"])

    @property
    def task(self) -> str:
        return str(self.manifest["task"])

    @property
    def task_module(self) -> str:
        """The member name of the lighteval custom task module (pass it as ``--custom-tasks``)."""
        return str(self.manifest["task_module"])

    @property
    def task_spec(self) -> str:
        return str(self.manifest.get("task_spec", f"{self.task}|0"))

    def extract_to(self, directory: Path) -> Path:
        """Write every member into ``directory`` (each atomically); returns the task module's path.

        Use a folder not named after the task module: it becomes lighteval's local ``hf_repo``.
        ``directory`` may itself be a symlink; below it no symlink is followed: a member whose
        folder is a symlink (or a file) raises ``DatasetPackageError`` naming it, and nothing is
        written through it.
        """
        directory.mkdir(parents=True, exist_ok=True)
        for name, data in self.members.items():
            try:
                write_below(directory, PurePosixPath(name).parts, data)
            except UnsafeDestinationError as exc:
                raise DatasetPackageError(self.source, [f"member {name!r}: cannot extract: {exc.strerror}"]) from None
        return directory / self.task_module


def load_dataset_package(zip_path: Path) -> DatasetPackage:
    """Read and verify ``zip_path``; any problem raises ``DatasetPackageError`` naming the file and member.

    The manifest is checked against its shipped JSON Schema, every member against the manifest's
    sha256 and size, and the manifest's claims (rows, subjects, answer key, task) against the
    members themselves.
    """
    members = _read_members(zip_path, _read_zip(zip_path))
    if MANIFEST not in members:
        raise DatasetPackageError(zip_path, [f"{MANIFEST} is missing (members: {', '.join(sorted(members))})"])
    manifest = _parse_json(zip_path, MANIFEST, members[MANIFEST])
    problems = manifest_problems(manifest)
    if problems:
        raise DatasetPackageError(zip_path, problems)
    _verify_members(zip_path, manifest["members"], members)
    answer_key = _parse_json(zip_path, ANSWER_KEY_MEMBER, members[ANSWER_KEY_MEMBER])
    if not isinstance(answer_key, dict) or not all(isinstance(v, str) for v in answer_key.values()):
        raise DatasetPackageError(zip_path, [f"{ANSWER_KEY_MEMBER}: must map question text to an answer string"])
    rows = _parse_rows(zip_path, members[ROWS_MEMBER])
    problems = content_problems(manifest, rows, answer_key, members[manifest["task_module"]])
    if problems:
        raise DatasetPackageError(zip_path, problems)
    return DatasetPackage(
        source=zip_path,
        manifest=MappingProxyType(manifest),
        members=MappingProxyType(members),
        rows=rows,
        answer_key=MappingProxyType(answer_key),
    )


def _read_zip(zip_path: Path) -> bytes:
    """The zip's bytes, at most ``MAX_ZIP_BYTES``: a regular file's size is checked before any byte is read."""
    try:
        fd = os.open(zip_path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise DatasetPackageError(zip_path, ["not a regular file"])
            if info.st_size > MAX_ZIP_BYTES:
                raise DatasetPackageError(zip_path, [f"{info.st_size} bytes, more than the {MAX_ZIP_BYTES} allowed"])
            raw = handle.read(info.st_size + 1)  # one byte more: a file still being written shows
    except OSError as exc:
        raise DatasetPackageError(zip_path, [f"cannot read: {exc.strerror or exc}"]) from exc
    if len(raw) != info.st_size:
        raise DatasetPackageError(zip_path, [f"changed size while being read (was {info.st_size} bytes)"])
    return raw


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """At most the member's declared size, inflated ``READ_CHUNK`` bytes at a time.

    ``archive.read`` inflates the whole stream in one call before cutting it to the declared
    size: a 1 MiB member declaring 1,000 bytes would take a gigabyte on the way.
    """
    chunks, left = [], info.file_size
    with archive.open(info) as handle:
        while left > 0 and (chunk := handle.read(min(left, READ_CHUNK))):
            chunks.append(chunk)
            left -= len(chunk)
    if left:
        raise zipfile.BadZipFile(f"inflates to {info.file_size - left} bytes, not the {info.file_size} it declares")
    return b"".join(chunks)


def _read_members(zip_path: Path, raw: bytes) -> dict[str, bytes]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError) as exc:
        raise DatasetPackageError(zip_path, [f"not a valid zip archive: {exc}"]) from exc
    with archive:
        infos = archive.infolist()
        problems = [p for info in infos if (p := _member_problem(info)) is not None]
        problems += [f"member {n!r}: appears more than once" for n in duplicates(info.filename for info in infos)]
        total = sum(info.file_size for info in infos)
        if total > MAX_TOTAL_BYTES:
            problems.append(f"members expand to {total} bytes, more than the {MAX_TOTAL_BYTES} allowed")
        if problems:
            raise DatasetPackageError(zip_path, _capped(problems))
        members = {}
        for info in infos:
            try:
                members[info.filename] = _read_member(archive, info)
            # RuntimeError: zipfile's "password required" for an encrypted member whose flag bit lies
            except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
                raise DatasetPackageError(zip_path, [f"member {info.filename!r}: cannot be read: {exc}"]) from exc
    return members


def _capped(problems: list[str]) -> list[str]:
    """A hostile zip can hold thousands of bad members: name the first ``MAX_LISTED``, count the rest."""
    if len(problems) <= MAX_LISTED:
        return problems
    return [*problems[:MAX_LISTED], f"... and {len(problems) - MAX_LISTED} more problem(s)"]


_DRIVE = re.compile(r"^[A-Za-z]:")
_UNIX = 3
_ENCRYPTED = 0x1  # general purpose flag bit 0 (APPNOTE 4.4.4)


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    """Members are plain files at relative POSIX paths: no traversal, no absolute paths, no links or folders."""
    name = info.filename
    parts = name.split("/")
    if not name or name.startswith("/") or "\\" in name or _DRIVE.match(name) or "\x00" in name:
        return f"member {name!r}: unsafe name (absolute, drive or backslash path)"
    if any(part in ("", ".", "..") for part in parts):
        return f"member {name!r}: unsafe name (empty, '.' or '..' path part)"
    file_type = stat.S_IFMT(info.external_attr >> 16) if info.create_system == _UNIX else 0
    if info.is_dir() or file_type not in (0, stat.S_IFREG):
        return f"member {name!r}: not a regular file"
    if info.flag_bits & _ENCRYPTED:
        return f"member {name!r}: encrypted (dataset packages are never encrypted)"
    if info.compress_size > _most_compressed(info.file_size):
        return (
            f"member {name!r}: declares {info.file_size} bytes but holds {info.compress_size} compressed bytes "
            "(no compression makes data that much larger: the declared size is a lie)"
        )
    return None


def _most_compressed(size: int) -> int:
    """More compressed bytes than any method makes of ``size`` bytes (deflate adds 5 bytes per 64 KiB block)."""
    return size + size // 100 + 1024


def _verify_members(zip_path: Path, listed: Mapping[str, Any], members: Mapping[str, bytes]) -> None:
    problems = [f"member {n!r}: not listed in {MANIFEST}" for n in sorted(members) if n not in listed and n != MANIFEST]
    problems += [f"member {n!r}: listed in {MANIFEST} but missing" for n in sorted(listed) if n not in members]
    for name in sorted(set(listed) & set(members)):
        data, expected = members[name], listed[name]
        actual = hashlib.sha256(data).hexdigest()
        if actual != expected["sha256"]:
            problems.append(f"member {name!r}: sha256 mismatch: manifest says {expected['sha256']}, member is {actual}")
        if len(data) != expected["size"]:
            problems.append(f"member {name!r}: size mismatch: manifest says {expected['size']}, member is {len(data)}")
    if problems:
        raise DatasetPackageError(zip_path, problems)


def _parse_json(zip_path: Path, member: str, data: bytes) -> Any:
    try:
        return loads_bytes(data)
    except JsonInputError as exc:
        raise DatasetPackageError(zip_path, [f"{member}: not valid UTF-8 JSON: {exc}"]) from None


def _parse_rows(zip_path: Path, data: bytes) -> tuple[dict[str, Any], ...]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetPackageError(zip_path, [f"{ROWS_MEMBER}: not valid UTF-8: {exc}"]) from exc
    rows = []
    # split on "\n" only: str.splitlines() would also cut at U+2028 or U+0085 inside a question
    for number, line in enumerate(text.removesuffix("\n").split("\n"), start=1):
        try:
            row = loads(line)
        except JsonInputError as exc:
            raise DatasetPackageError(zip_path, [f"{ROWS_MEMBER}: line {number}: not valid JSON: {exc}"]) from None
        if not isinstance(row, dict):
            raise DatasetPackageError(zip_path, [f"{ROWS_MEMBER}: line {number}: must be a JSON object"])
        rows.append(row)
    return tuple(rows)
