"""A team's own dataset package: rows ``{"question", "choices", "answer"}`` (a JSONL file or code) to a zip.

The zip is the format of evaljig's own ``fixtures/datasets/*.zip`` (``evaljig-dataset-package/1``,
its manifest described by ``dataset_manifest_schema()``), built by the same code, so it is
byte-stable and ``load_dataset_package`` reads it. Rows only need the three fields; ``id`` and
``subject`` are filled in (``<name>-0001``, ``default``) when absent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any

from evaljig_common import write_bytes_atomic
from evaljig_corpus.strict_json import loads
from evaljig_fixtures._datasets.build import package_bytes
from evaljig_fixtures._datasets.source import LETTERS, DatasetSource, source_problems
from evaljig_fixtures._errors import BuildError

DEFAULT_ACCURACY = 0.7
MANIFEST_SCHEMA = "dataset-manifest.schema.json"
_ROW_FIELDS = ("id", "subject", "question", "choices", "answer")


def dataset_manifest_schema() -> dict[str, Any]:
    """The JSON Schema of a dataset package's ``manifest.json`` (shipped as package data)."""
    text = files("evaljig_fixtures").joinpath("data", MANIFEST_SCHEMA).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def read_rows_jsonl(path: Path) -> list[dict[str, Any]]:
    """One JSON object per non-blank line; a problem raises ``BuildError`` naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BuildError(f"{path}: cannot read rows: {exc}") from exc
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
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


def dataset_source(
    rows: Iterable[Mapping[str, Any]] | Path,
    *,
    name: str,
    task: str | None = None,
    description: str = "",
    version: int = 1,
    accuracy: float = DEFAULT_ACCURACY,
) -> DatasetSource:
    """Check ``rows`` (or a JSONL file of them) for a package called ``name``; ``BuildError`` lists every problem."""
    where = str(rows) if isinstance(rows, Path) else f"dataset {name}"
    raw = read_rows_jsonl(rows) if isinstance(rows, Path) else list(rows)
    data: dict[str, Any] = {
        "name": name,
        "version": version,
        "task": task if task is not None else name.replace("-", "_"),
        "description": description,
        "accuracy": float(accuracy) if isinstance(accuracy, int) and not isinstance(accuracy, bool) else accuracy,
        "rows": normalize_rows(name, raw),
    }
    problems = source_problems(data)
    if problems:
        raise BuildError("\n".join(f"{where}: {p}" for p in problems))
    return DatasetSource(
        name=name, version=version, task=data["task"], description=description, accuracy=data["accuracy"],
        rows=tuple(data["rows"]),
    )  # fmt: skip


def dataset_package_bytes(
    rows: Iterable[Mapping[str, Any]] | Path,
    *,
    name: str,
    task: str | None = None,
    description: str = "",
    version: int = 1,
    accuracy: float = DEFAULT_ACCURACY,
) -> bytes:
    """The zip's bytes: the same rows and options give the same bytes, on any machine.

    ``task`` (the lighteval task and module name) defaults to ``name`` with ``-`` as ``_``;
    ``accuracy`` is the share of questions the gateway's answer key gets right (strictly between
    0 and 1, so scores are neither 0 nor 1).
    """
    source = dataset_source(
        rows, name=name, task=task, description=description, version=version, accuracy=accuracy
    )  # fmt: skip
    return package_bytes(source)


def write_dataset_package(
    path: Path,
    rows: Iterable[Mapping[str, Any]] | Path,
    *,
    name: str,
    task: str | None = None,
    description: str = "",
    version: int = 1,
    accuracy: float = DEFAULT_ACCURACY,
) -> Path:
    """Write the package to ``path`` atomically; returns ``path``."""
    data = dataset_package_bytes(
        rows, name=name, task=task, description=description, version=version, accuracy=accuracy
    )  # fmt: skip
    return write_bytes_atomic(path, data)
