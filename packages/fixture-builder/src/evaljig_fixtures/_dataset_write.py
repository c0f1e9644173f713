"""Writing a dataset package: a ``DatasetSource`` (rows and what the manifest says, checked row by row) and the
task module, answer key, manifest and deterministic zip made from it.

The zip (``evaljig-dataset-package/1``, its manifest described by ``dataset_manifest_schema()``)
depends only on the source, so a rebuild is byte-for-byte identical and ``load_dataset_package`` reads it.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import stat
import unicodedata
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from importlib.resources import files
from pathlib import Path
from string import Template
from typing import Any

from evaljig_common import write_bytes_atomic
from evaljig_corpus.strict_json import loads
from evaljig_fixtures._dataset_load import (
    ANSWER_KEY_MEMBER,
    FORMAT,
    LETTERS,
    MANIFEST,
    ROW_FIELDS,
    ROWS_MEMBER,
    UNIX_SYSTEM,
    canonical_json,
    member_entry,
    row_problems,
)
from evaljig_fixtures._errors import BuildError

# --- ``DatasetSource``: the rows a package is generated from and what its manifest says, checked row by row.
_TASK_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_DATASET_NAME = re.compile(r"^[a-z][a-z0-9-]*$")
DEFAULT_ACCURACY = 0.7


@dataclass(frozen=True, slots=True)
class DatasetSource:
    """Everything a dataset package is made of: its rows and what the manifest says about them.

    ``rows`` are objects ``{"question", "choices", "answer"}`` (``id`` and ``subject`` are filled
    in as ``<name>-0001`` and ``default`` when absent; ``answer`` may be a 0-based index), in code
    or as a JSONL file read when the package is built. ``task`` (the lighteval task and module
    name) defaults to ``name`` with ``-`` as ``_``; ``accuracy`` is the share of questions the
    gateway's answer key gets right (strictly between 0 and 1, so scores are neither 0 nor 1);
    ``scripts``/``features`` are claims the rows must bear out (``polyglot``'s writing systems).
    """

    rows: Sequence[Mapping[str, Any]] | Path
    _: KW_ONLY
    name: str
    task: str | None = None
    description: str = ""
    version: int = 1
    accuracy: float = DEFAULT_ACCURACY
    scripts: tuple[str, ...] = ()
    features: tuple[str, ...] = ()

    @property
    def task_name(self) -> str:
        return self.task if self.task is not None else self.name.replace("-", "_")

    def checked_rows(self) -> tuple[dict[str, Any], ...]:
        """The rows in the package's field order, read and checked; ``BuildError`` lists every problem."""
        where = str(self.rows) if isinstance(self.rows, Path) else f"dataset {self.name}"
        raw = read_rows_jsonl(self.rows) if isinstance(self.rows, Path) else list(self.rows)
        rows = normalize_rows(self.name, raw)
        problems = _source_problems(self, rows)
        if problems:
            raise BuildError("\n".join(f"{where}: {p}" for p in problems))
        return tuple(rows)


def read_rows_jsonl(path: Path) -> list[dict[str, Any]]:
    """One JSON object per non-blank line; a problem raises ``BuildError`` naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BuildError(f"{path}: cannot read rows: {exc}") from exc
    rows = []
    # split on "\n" only: str.splitlines() would also cut at U+2028 or U+0085 inside a question
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = loads(line)
        except ValueError as exc:
            raise BuildError(f"{path}:{number}: not a JSON object: {exc}") from exc
        if not isinstance(row, dict):
            raise BuildError(f"{path}:{number}: must be a JSON object with question, choices and answer")
        rows.append(row)
    if not rows:
        raise BuildError(f"{path}: no rows (one JSON object per line: question, choices, answer)")
    return rows


def _answer_letter(answer: Any, choices: Any) -> Any:
    """``"B"`` stays; a 0-based index becomes its letter; anything else is left for the checks to name."""
    if isinstance(answer, int) and not isinstance(answer, bool) and isinstance(choices, list):
        return LETTERS[answer] if 0 <= answer < min(len(choices), len(LETTERS)) else answer
    return answer


def normalize_rows(name: str, rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows in the package's field order, ``id`` and ``subject`` filled in, ``answer`` as a letter."""
    out = []
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, Mapping):
            raise BuildError(f"dataset {name}: row #{number}: must be an object with question, choices and answer")
        full = {
            "id": row.get("id", f"{name}-{number:04d}"),
            "subject": row.get("subject", "default"),
            "question": row.get("question"),
            "choices": row.get("choices"),
            "answer": _answer_letter(row.get("answer"), row.get("choices")),
        }
        full.update({k: v for k, v in row.items() if k not in ROW_FIELDS})  # unknown fields: named by the checks
        out.append(full)
    return out


def _source_problems(source: DatasetSource, rows: Sequence[dict[str, Any]]) -> list[str]:
    """Every problem of a source (name, task, version, description, accuracy, rows), each naming the field."""
    problems = []
    # typed as object: a caller's values reach here unchecked (a dataclass does not enforce its annotations)
    name: object = source.name
    task: object = source.task_name
    version: object = source.version
    description: object = source.description
    accuracy: object = source.accuracy
    if not isinstance(name, str) or not _DATASET_NAME.match(name):
        problems.append("field 'name': must be a lowercase name such as mini-mmlu")
    if not isinstance(task, str) or not _TASK_NAME.match(task):
        problems.append("field 'task': must be a Python identifier such as mini_mmlu")
    if isinstance(version, bool) or not isinstance(version, int):
        problems.append("field 'version': must be an integer")
    if not isinstance(description, str):
        problems.append("field 'description': must be a string")
    if isinstance(accuracy, int) and not isinstance(accuracy, bool):
        accuracy = float(accuracy)
    if not isinstance(accuracy, float) or not 0 < accuracy < 1:
        problems.append("field 'accuracy': must be a number strictly between 0 and 1")
    if not rows:
        return [*problems, "field 'rows': must be a non-empty list"]
    seen_ids: set[str] = set()
    seen_questions: set[str] = set()
    for index, row in enumerate(rows):
        for problem in row_problems(row):
            label = row.get("id") if isinstance(row, dict) and isinstance(row.get("id"), str) else f"#{index}"
            problems.append(f"row {label}: {problem}")
        if isinstance(row, dict):
            if row.get("id") in seen_ids:
                problems.append(f"row {row['id']}: field 'id': duplicate")
            if row.get("question") in seen_questions:
                problems.append(f"row {row.get('id')}: field 'question': duplicate question text")
            seen_ids.add(str(row.get("id")))
            seen_questions.add(str(row.get("question")))
    return problems


# --- Zip bytes that depend only on the members' names and bytes, so a rebuild is byte-for-byte identical.
FIXED_DATE_TIME = (1980, 1, 1, 0, 0, 0)
"""The earliest time a zip can store; no clock or file mtime leaks in."""
FILE_MODE = 0o644
COMPRESS_TYPE = zipfile.ZIP_DEFLATED
COMPRESS_LEVEL = 9


def deterministic_zip(members: Mapping[str, bytes]) -> bytes:
    """Sorted entries, fixed timestamp and permissions, one compression setting, no extra fields or comment."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in sorted(members):
            info = zipfile.ZipInfo(name, date_time=FIXED_DATE_TIME)
            info.create_system = UNIX_SYSTEM
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


def _check_claims(source: DatasetSource, rows: Sequence[dict[str, Any]]) -> None:
    """The manifest may only claim scripts and features the rows really contain."""
    texts = [text for row in rows for text in (row["question"], *row["choices"])]
    missing = sorted(set(source.scripts) - scripts_in(texts)) + sorted(set(source.features) - features_in(texts))
    if missing:
        raise BuildError(f"dataset {source.name}: declared but absent from the rows: {', '.join(missing)}")


# --- The public entry points: the zip of a ``DatasetSource``, its bytes or written atomically.
def dataset_package_bytes(source: DatasetSource) -> bytes:
    """The zip's bytes: the same source gives the same bytes, on any machine."""
    return deterministic_zip(package_members(source))


def write_dataset_package(path: Path, source: DatasetSource) -> Path:
    """Write the package of ``source`` to ``path`` atomically; returns ``path``."""
    return write_bytes_atomic(path, dataset_package_bytes(source))
