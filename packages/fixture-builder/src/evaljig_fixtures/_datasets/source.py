"""``DatasetSource``: the rows a dataset package is generated from and what its manifest says, checked row by row."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any

from evaljig_corpus.strict_json import loads
from evaljig_fixtures._errors import BuildError

LETTERS = ("A", "B", "C", "D")
MIN_CHOICES = 2
_TASK_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_DATASET_NAME = re.compile(r"^[a-z][a-z0-9-]*$")
_ROW_KEYS = ("id", "subject", "question", "choices", "answer")


DEFAULT_ACCURACY = 0.7
_ROW_FIELDS = ("id", "subject", "question", "choices", "answer")


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
    def subjects(self) -> tuple[str, ...]:
        return tuple(sorted({row["subject"] for row in self.checked_rows()}))

    @property
    def task_name(self) -> str:
        return self.task if self.task is not None else self.name.replace("-", "_")

    def checked_rows(self) -> tuple[dict[str, Any], ...]:
        """The rows in the package's field order, read and checked; ``BuildError`` lists every problem."""
        where = str(self.rows) if isinstance(self.rows, Path) else f"dataset {self.name}"
        raw = read_rows_jsonl(self.rows) if isinstance(self.rows, Path) else list(self.rows)
        accuracy = self.accuracy
        data: dict[str, Any] = {
            "name": self.name,
            "version": self.version,
            "task": self.task_name,
            "description": self.description,
            "accuracy": float(accuracy) if isinstance(accuracy, int) and not isinstance(accuracy, bool) else accuracy,
            "rows": normalize_rows(self.name, raw),
        }
        problems = source_problems(data)
        if problems:
            raise BuildError("\n".join(f"{where}: {p}" for p in problems))
        return tuple(data["rows"])


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
        full.update({k: v for k, v in row.items() if k not in _ROW_FIELDS})  # unknown fields: named by the checks
        out.append(full)
    return out


def source_problems(data: Any) -> list[str]:
    """Every problem of a parsed source (name, task, version, description, accuracy, rows), each naming the field."""
    if not isinstance(data, dict):
        return ["must be a JSON object"]
    problems = []
    if not isinstance(data.get("name"), str) or not _DATASET_NAME.match(data["name"]):
        problems.append("field 'name': must be a lowercase name such as mini-mmlu")
    if not isinstance(data.get("task"), str) or not _TASK_NAME.match(data["task"]):
        problems.append("field 'task': must be a Python identifier such as mini_mmlu")
    if isinstance(data.get("version"), bool) or not isinstance(data.get("version"), int):
        problems.append("field 'version': must be an integer")
    if not isinstance(data.get("description"), str):
        problems.append("field 'description': must be a string")
    accuracy = data.get("accuracy")
    if not isinstance(accuracy, float) or not 0 < accuracy < 1:
        problems.append("field 'accuracy': must be a number strictly between 0 and 1")
    rows = data.get("rows")
    if not isinstance(rows, list) or not rows:
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


def row_problems(row: Any) -> list[str]:
    if not isinstance(row, dict):
        return ["must be an object"]
    problems = [f"unknown field '{k}'" for k in row if k not in _ROW_KEYS]
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
