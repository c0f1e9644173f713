"""Reading a dataset package (``load_dataset_package``): the format, its manifest's schema, the members' hashes and
claims, safe extraction.

A package is untrusted input: every member is size-capped, hashed against the manifest, and its
claims (rows, subjects, answer key, task module) checked against what it really holds; extraction
follows no symlink below its destination.
"""

from __future__ import annotations

import ast
import errno
import functools
import hashlib
import io
import json
import os
import re
import secrets
import stat
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any

from evaljig_common import TMP_SUFFIX
from evaljig_corpus.strict_json import JsonInputError, duplicates, loads, loads_bytes
from evaljig_fixtures._errors import DatasetPackageError

# --- The rows of ``test.jsonl``: every package holds them in this field order, checked on write and on read.
LETTERS = ("A", "B", "C", "D")
MIN_CHOICES = 2
ROW_FIELDS = ("id", "subject", "question", "choices", "answer")


def row_problems(row: Any) -> list[str]:
    """What is wrong with one row, each naming the field; empty when the row is usable."""
    if not isinstance(row, dict):
        return ["must be an object"]
    problems = [f"unknown field '{k}'" for k in row if k not in ROW_FIELDS]
    problems += [f"field '{k}': must be a non-empty string" for k in ("id", "subject", "question") if not _text(row, k)]
    choices = row.get("choices")
    if (
        not isinstance(choices, list)
        or not MIN_CHOICES <= len(choices) <= len(LETTERS)
        or not all(isinstance(c, str) and c for c in choices)
    ):
        problems.append(f"field 'choices': must be {MIN_CHOICES} to {len(LETTERS)} non-empty strings")
        return problems
    if len(set(choices)) != len(choices):
        problems.append("field 'choices': must be distinct")
    letters = LETTERS[: len(choices)]
    if row.get("answer") not in letters:
        problems.append(f"field 'answer': must be one of {', '.join(letters)} (or a 0-based index)")
    return problems


def _text(row: dict[str, Any], key: str) -> bool:
    value = row.get(key)
    return isinstance(value, str) and bool(value.strip())


# --- ``manifest.json`` of a dataset package: what it is, and the sha256 and size of every other member.
MANIFEST = "manifest.json"
FORMAT = "evaljig-dataset-package/1"
ROWS_MEMBER = "test.jsonl"
ANSWER_KEY_MEMBER = "answer_key.json"
MANIFEST_SCHEMA = "dataset-manifest.schema.json"
#: A member's ``create_system`` when it carries Unix permissions (APPNOTE 4.4.2).
UNIX_SYSTEM = 3


def canonical_json(data: Any) -> bytes:
    """Fixed key order as given, indent 2, exact code points (no ``\\u`` escapes), trailing newline."""
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def member_entry(data: bytes) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def manifest_problems(manifest: Any) -> list[str]:
    """What is wrong with a parsed manifest against its shipped JSON Schema, each naming the field; empty when usable.

    The schema (``data/dataset-manifest.schema.json``, ``dataset_manifest_schema()``) is the one
    contract: a name such as ``../../etc/evil``, ``rows: -1`` or a field it does not define is
    refused here, before anything else of the package is read.
    """
    problems = [_schema_problem(error) for error in sorted(_validator().iter_errors(manifest), key=_error_key)]
    if problems:
        return problems
    module = manifest["task_module"]
    if module not in manifest["members"]:
        problems.append(f"{MANIFEST}: field 'members': must list the task module {module} (field 'task_module')")
    return problems


MAX_REASON = 160
"""A schema message quotes the offending value: it is cut here, so a hostile value cannot flood the error."""


def _error_key(error: Any) -> tuple[str, str]:
    return (_field(error), error.message)


def _field(error: Any) -> str:
    return ".".join(str(part) for part in error.absolute_path)


def _schema_problem(error: Any) -> str:
    field = _field(error)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(error.schema.get("properties", {}))
        unknown = sorted(str(k) for k in error.instance if k not in allowed)
        where = f"field '{field}'" if field else "top level"
        return f"{MANIFEST}: {where}: unknown field(s) {', '.join(unknown)[:MAX_REASON]} (not in the manifest's schema)"
    if error.validator == "required":
        missing = error.message.split("'")[1] if error.message.count("'") >= 2 else error.message
        name = f"{field}.{missing}" if field else missing
        return f"{MANIFEST}: field '{name}': is required"
    if error.validator == "const":
        got = repr(error.instance)[:MAX_REASON]
        return f"{MANIFEST}: field '{field}': must be {error.validator_value!r}, got {got}"
    reason = error.message if len(error.message) <= MAX_REASON else error.message[:MAX_REASON] + "..."
    return f"{MANIFEST}: field '{field or '(top level)'}': {reason}"


def dataset_manifest_schema() -> dict[str, Any]:
    """The JSON Schema of a dataset package's ``manifest.json`` (shipped as package data)."""
    text = files("evaljig_fixtures").joinpath("data", MANIFEST_SCHEMA).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _validator() -> Any:
    """The schema's validator, built once (jsonschema is imported on first use: it costs ~100 ms)."""
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

    schema = dataset_manifest_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


# --- The manifest's claims against what the package holds: rows, subjects, answer key, task module.
#
# The members' hashes only prove the bytes are the ones the manifest lists; a manifest written by
# hand (or by a tool with a bug) can still misstate them: ``rows: 9999`` for 42 rows, an answer
# key for other questions, a task module that defines another task. Each problem names the
# member or manifest field and the reason.
MAX_NAMED = 3
"""At most this many questions are named in one problem; the rest are counted."""


def content_problems(
    manifest: Mapping[str, Any], rows: Sequence[dict[str, Any]], answer_key: Mapping[str, str], module: bytes
) -> list[str]:
    """Every mismatch between the manifest, ``test.jsonl``, ``answer_key.json`` and the task module."""
    problems = [f"{ROWS_MEMBER}: line {n}: {p}" for n, row in enumerate(rows, start=1) for p in row_problems(row)]
    if problems:
        more = [f"... and {len(problems) - MAX_NAMED} more"] if len(problems) > MAX_NAMED else []
        return problems[:MAX_NAMED] + more
    problems += _manifest_claims(manifest, rows, answer_key)
    problems += _answer_key_problems(rows, answer_key)
    problems += _task_module_problems(manifest, module)
    return problems


def _manifest_claims(
    manifest: Mapping[str, Any], rows: Sequence[dict[str, Any]], answer_key: Mapping[str, str]
) -> list[str]:
    problems = []
    if "rows" in manifest and manifest["rows"] != len(rows):
        problems.append(f"{MANIFEST}: field 'rows': says {manifest['rows']}, {ROWS_MEMBER} holds {len(rows)}")
    subjects = sorted({row["subject"] for row in rows})
    if "subjects" in manifest and list(manifest["subjects"]) != subjects:
        problems.append(f"{MANIFEST}: field 'subjects': must be the rows' subjects, sorted: {subjects}")
    claim = manifest.get("answer_key")
    if isinstance(claim, Mapping):
        correct = sum(answer_key.get(row["question"]) == row["answer"] for row in rows)
        if claim["total"] != len(rows):
            problems.append(f"{MANIFEST}: field 'answer_key.total': says {claim['total']}, there are {len(rows)} rows")
        if claim["correct"] != correct:
            problems.append(
                f"{MANIFEST}: field 'answer_key.correct': says {claim['correct']}, {ANSWER_KEY_MEMBER} answers "
                f"{correct} correctly"
            )
    spec = manifest.get("task_spec")
    if isinstance(spec, str) and spec.split("|", 1)[0] != manifest["task"]:
        problems.append(f"{MANIFEST}: field 'task_spec': {spec!r} does not name the task {manifest['task']!r}")
    return problems


def _named(questions: Sequence[str]) -> str:
    shown = ", ".join(repr(q[:60]) for q in questions[:MAX_NAMED])
    return shown + (f" and {len(questions) - MAX_NAMED} more" if len(questions) > MAX_NAMED else "")


def _answer_key_problems(rows: Sequence[dict[str, Any]], answer_key: Mapping[str, str]) -> list[str]:
    """One answer per question of the rows, each a letter among that row's choices."""
    questions = [row["question"] for row in rows]
    problems = []
    missing = [q for q in questions if q not in answer_key]
    if missing:
        problems.append(f"{ANSWER_KEY_MEMBER}: no answer for {_named(missing)}")
    known = set(questions)
    extra = [q for q in answer_key if q not in known]
    if extra:
        problems.append(f"{ANSWER_KEY_MEMBER}: answers questions {ROWS_MEMBER} does not hold: {_named(extra)}")
    bad = [r["question"] for r in rows if answer_key.get(r["question"], "A") not in LETTERS[: len(r["choices"])]]
    if bad:
        problems.append(f"{ANSWER_KEY_MEMBER}: an answer that is not one of the row's choice letters for {_named(bad)}")
    return problems


def _task_module_problems(manifest: Mapping[str, Any], module: bytes) -> list[str]:
    """The task module is Python defining the manifest's task (``LightevalTaskConfig(name=TASK)``), and TASKS_TABLE."""
    where = f"member {manifest['task_module']!r} (field 'task_module')"
    try:
        tree = ast.parse(module.decode("utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
        return [f"{where}: not a Python module: {exc}"]
    names = {
        keyword.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg == "name" and isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, str)
    }
    problems = []
    if manifest["task"] not in names:
        problems.append(f"{where}: defines no task named {manifest['task']!r} (field 'task')")
    tables = [
        node
        for node in tree.body
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TASKS_TABLE" for t in node.targets)
    ]
    if not tables:
        problems.append(f"{where}: has no TASKS_TABLE (lighteval reads a custom task module's tasks from it)")
    return problems


# --- Write a package's members below a folder without ever following a symlink out of it.
#
# The destination may hold anything already (a previous run, or a symlink planted by someone
# else): each member's folders are opened one at a time relative to the folder above them with
# ``O_NOFOLLOW``, and the file is created and renamed into place relative to that open folder,
# so a symlink swapped in between a check and a write cannot redirect it either. The
# destination folder itself may be a symlink: it is the caller's choice. Each file is written
# atomically, like ``evaljig_common.write_bytes_atomic``: a hidden temporary sibling renamed
# over the target.
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC
_NAME_KEEP = 200


class UnsafeDestinationError(OSError):
    """A folder on a member's path is a symlink or not a folder: nothing is written through it."""


def write_below(root: Path, parts: Sequence[str], data: bytes) -> Path:
    """Write ``data`` to ``root/parts...`` creating folders, following no symlink below ``root``."""
    fd = os.open(root, _DIR_FLAGS)
    try:
        for depth, part in enumerate(parts[:-1], start=1):
            child = _open_folder(fd, part, root.joinpath(*parts[:depth]))
            os.close(fd)
            fd = child
        _write_atomic_at(fd, parts[-1], data)
    finally:
        os.close(fd)
    return root.joinpath(*parts)


def _open_folder(parent_fd: int, name: str, shown: Path) -> int:
    with suppress(FileExistsError):
        os.mkdir(name, dir_fd=parent_fd)
    try:
        return os.open(name, _DIR_FLAGS | getattr(os, "O_NOFOLLOW", 0), dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        mode = os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode
        what = "a symbolic link" if stat.S_ISLNK(mode) else "not a folder"
        raise UnsafeDestinationError(exc.errno, f"{shown} is {what}: not written through", str(shown)) from None


def _write_atomic_at(dir_fd: int, name: str, data: bytes) -> None:
    tmp = f".{name[:_NAME_KEEP]}.{os.getpid()}.{secrets.token_hex(4)}{TMP_SUFFIX}"
    fd = os.open(tmp, _FILE_FLAGS, 0o666, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise


# --- Load a dataset package zip and trust nothing in it until the manifest vouches for every byte.
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
_ENCRYPTED = 0x1  # general purpose flag bit 0 (APPNOTE 4.4.4)


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    """Members are plain files at relative POSIX paths: no traversal, no absolute paths, no links or folders."""
    name = info.filename
    parts = name.split("/")
    if not name or name.startswith("/") or "\\" in name or _DRIVE.match(name) or "\x00" in name:
        return f"member {name!r}: unsafe name (absolute, drive or backslash path)"
    if any(part in ("", ".", "..") for part in parts):
        return f"member {name!r}: unsafe name (empty, '.' or '..' path part)"
    file_type = stat.S_IFMT(info.external_attr >> 16) if info.create_system == UNIX_SYSTEM else 0
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
