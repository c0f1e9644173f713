"""The question data a dataset package is generated from, read from package data and checked row by row."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from evaljig_corpus.strict_json import loads
from evaljig_fixtures._errors import BuildError

LETTERS = ("A", "B", "C", "D")
MIN_CHOICES = 2
_TASK_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_DATASET_NAME = re.compile(r"^[a-z][a-z0-9-]*$")
_ROW_KEYS = ("id", "subject", "question", "choices", "answer")


@dataclass(frozen=True, slots=True)
class DatasetSource:
    """One dataset as written in ``evaljig_fixtures/data/<file>``; rows keep their exact code points."""

    name: str
    version: int
    task: str
    description: str
    accuracy: float
    """Share of questions the fake model answers correctly (the answer key's target, not a guess)."""
    rows: tuple[dict[str, Any], ...]
    scripts: tuple[str, ...] = ()
    features: tuple[str, ...] = ()

    @property
    def subjects(self) -> tuple[str, ...]:
        return tuple(sorted({row["subject"] for row in self.rows}))


def load_dataset_source(filename: str) -> DatasetSource:
    """Read and check ``data/<filename>``; a problem raises ``BuildError`` naming the file, row and field."""
    where = f"evaljig_fixtures/data/{filename}"
    try:
        data = loads(files("evaljig_fixtures").joinpath("data", filename).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # ValueError: JsonInputError and UnicodeDecodeError
        raise BuildError(f"{where}: cannot read dataset source: {exc}") from exc
    problems = source_problems(data)
    if problems:
        raise BuildError("\n".join(f"{where}: {p}" for p in problems))
    return DatasetSource(
        name=data["name"],
        version=data["version"],
        task=data["task"],
        description=data["description"],
        accuracy=data["accuracy"],
        rows=tuple(data["rows"]),
        scripts=tuple(data.get("scripts", ())),
        features=tuple(data.get("features", ())),
    )


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
