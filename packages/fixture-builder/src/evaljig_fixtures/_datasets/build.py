"""Writing a dataset package from a ``DatasetSource``: its task module, answer key, manifest and deterministic zip.

The zip (``evaljig-dataset-package/1``, its manifest described by ``dataset_manifest_schema()``)
depends only on the source, so a rebuild is byte-for-byte identical and ``load_dataset_package`` reads it.
"""

from __future__ import annotations

import hashlib
import io
import json
import stat
import unicodedata
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from string import Template
from typing import Any

from evaljig_common import write_bytes_atomic
from evaljig_fixtures._datasets.package import (
    ANSWER_KEY_MEMBER,
    FORMAT,
    MANIFEST,
    ROWS_MEMBER,
    canonical_json,
    member_entry,
)
from evaljig_fixtures._datasets.source import LETTERS, DatasetSource
from evaljig_fixtures._errors import BuildError

# --- Zip bytes that depend only on the members' names and bytes, so a rebuild is byte-for-byte identical.
FIXED_DATE_TIME = (1980, 1, 1, 0, 0, 0)

"""The earliest time a zip can store; no clock or file mtime leaks in."""
FILE_MODE = 0o644
COMPRESS_TYPE = zipfile.ZIP_DEFLATED
COMPRESS_LEVEL = 9
_UNIX = 3


def deterministic_zip(members: Mapping[str, bytes]) -> bytes:
    """Sorted entries, fixed timestamp and permissions, one compression setting, no extra fields or comment."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in sorted(members):
            info = zipfile.ZipInfo(name, date_time=FIXED_DATE_TIME)
            info.create_system = _UNIX
            info.external_attr = (stat.S_IFREG | FILE_MODE) << 16
            info.compress_type = COMPRESS_TYPE
            archive.writestr(info, members[name], compress_type=COMPRESS_TYPE, compresslevel=COMPRESS_LEVEL)
    return buffer.getvalue()


# --- The lighteval custom task module shipped in every dataset package, rendered from one template.
LIGHTEVAL_VERSION = "0.13"
TEMPLATE = "task_module.py.tmpl"


def render_task_module(task: str) -> str:
    """The module source for ``task`` (a Python identifier; it names the config, the prompt and the task)."""
    if not task.isidentifier():
        raise ValueError(f"task name {task!r} is not a Python identifier")
    text = files("evaljig_fixtures").joinpath("data", TEMPLATE).read_text(encoding="utf-8")
    return Template(text).substitute(task=task, lighteval_version=LIGHTEVAL_VERSION)


# --- The gateway answer key: which letter the fake model gives, right for a fixed share of questions.
#
# Questions are ranked by a digest of (dataset, id) and the first ``round(accuracy * n)`` get the
# gold letter, so the share is exact and stable, and scores are neither 0 nor 1.
def _digest(dataset: str, row_id: str) -> bytes:
    return hashlib.sha256(f"{dataset}\x00{row_id}".encode()).digest()


def build_answer_key(dataset: str, rows: Sequence[dict[str, Any]], accuracy: float) -> dict[str, str]:
    """``question text -> letter`` in row order; a wrong letter is a stable function of the row too."""
    ranked = sorted(rows, key=lambda row: _digest(dataset, row["id"]))
    correct = {row["id"] for row in ranked[: round(accuracy * len(rows))]}
    key = {}
    for row in rows:
        gold = LETTERS.index(row["answer"])
        if row["id"] in correct:
            key[row["question"]] = LETTERS[gold]
        else:
            count = len(row["choices"])  # a wrong letter among the row's own choices
            offset = 1 + _digest(dataset, row["id"])[0] % (count - 1)
            key[row["question"]] = LETTERS[(gold + offset) % count]
    return key


# --- Which writing systems and tricky Unicode features a text really contains (by code point, not by claim).
ZWJ = "\u200d"
_NAME_PREFIXES = {
    "LATIN": "Latin",
    "CYRILLIC": "Cyrillic",
    "GREEK": "Greek",
    "ARABIC": "Arabic",
    "HEBREW": "Hebrew",
    "DEVANAGARI": "Devanagari",
    "CJK UNIFIED IDEOGRAPH": "Han",
    "HIRAGANA": "Hiragana",
    "KATAKANA": "Katakana",
    "HANGUL": "Hangul",
    "THAI": "Thai",
}

_EMOJI_RANGES = ((0x1F000, 0x1FAFF), (0x2600, 0x27BF))


def char_script(char: str) -> str | None:
    """The script of a letter-like character, ``Emoji`` for pictographs, ``None`` for everything else."""
    if any(low <= ord(char) <= high for low, high in _EMOJI_RANGES):
        return "Emoji"
    if unicodedata.category(char)[0] not in "LM":
        return None
    name = unicodedata.name(char, "")
    return next((script for prefix, script in _NAME_PREFIXES.items() if name.startswith(prefix)), None)


def scripts_in(texts: Iterable[str]) -> set[str]:
    return {script for text in texts for char in text if (script := char_script(char)) is not None}


def features_in(texts: Iterable[str]) -> set[str]:
    """``combining-marks`` (a decomposed sequence NFC would change) and ``zwj-sequences``."""
    found = set()
    for text in texts:
        if unicodedata.normalize("NFC", text) != text:
            found.add("combining-marks")
        if ZWJ in text:
            found.add("zwj-sequences")
    return found


# --- Turn a ``DatasetSource`` into the bytes of its ``<name>.eval752.zip`` package.
PACKAGE_SUFFIX = ".eval752.zip"


def rows_jsonl(rows: Sequence[dict[str, Any]]) -> bytes:
    """One compact JSON object per line, keys in row order, code points exactly as in the source."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def package_members(source: DatasetSource) -> dict[str, bytes]:
    """Every member of the package, the manifest last computed over the others."""
    rows, task = source.checked_rows(), source.task_name
    answer_key = build_answer_key(source.name, rows, float(source.accuracy))
    module = f"{task}.py"
    members = {
        ROWS_MEMBER: rows_jsonl(rows),
        module: render_task_module(task).encode("utf-8"),
        ANSWER_KEY_MEMBER: canonical_json(answer_key),
    }
    correct = sum(answer_key[row["question"]] == row["answer"] for row in rows)
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "name": source.name,
        "version": source.version,
        "description": source.description,
        "task": task,
        "task_module": module,
        "task_spec": f"{task}|0",
        "rows": len(rows),
        "subjects": sorted({row["subject"] for row in rows}),
        "answer_key": {"correct": correct, "total": len(rows)},
    }
    if source.scripts or source.features:
        manifest["scripts"] = list(source.scripts)
        manifest["features"] = list(source.features)
        _check_claims(source, rows)
    manifest["members"] = {name: member_entry(members[name]) for name in sorted(members)}
    members[MANIFEST] = canonical_json(manifest)
    return members


def package_bytes(source: DatasetSource) -> bytes:
    """The zip's bytes: the same source gives the same bytes, on any machine."""
    return deterministic_zip(package_members(source))


def _check_claims(source: DatasetSource, rows: Sequence[dict[str, Any]]) -> None:
    """The manifest may only claim scripts and features the rows really contain."""
    texts = [text for row in rows for text in (row["question"], *row["choices"])]
    missing = sorted(set(source.scripts) - scripts_in(texts)) + sorted(set(source.features) - features_in(texts))
    if missing:
        raise BuildError(f"dataset {source.name}: declared but absent from the rows: {', '.join(missing)}")


# --- The public entry points: the manifest's schema, the zip of a ``DatasetSource``, written atomically.
MANIFEST_SCHEMA = "dataset-manifest.schema.json"


def dataset_manifest_schema() -> dict[str, Any]:
    """The JSON Schema of a dataset package's ``manifest.json`` (shipped as package data)."""
    text = files("evaljig_fixtures").joinpath("data", MANIFEST_SCHEMA).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def dataset_package_bytes(source: DatasetSource) -> bytes:
    """The zip's bytes: the same source gives the same bytes, on any machine."""
    return package_bytes(source)


def write_dataset_package(path: Path, source: DatasetSource) -> Path:
    """Write the package of ``source`` to ``path`` atomically; returns ``path``."""
    return write_bytes_atomic(path, package_bytes(source))
