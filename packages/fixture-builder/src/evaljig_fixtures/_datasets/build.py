"""Turn a ``DatasetSource`` into the bytes of its ``<name>.eval752.zip`` package."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from evaljig_fixtures._datasets.answer_key import build_answer_key
from evaljig_fixtures._datasets.deterministic_zip import deterministic_zip
from evaljig_fixtures._datasets.manifest import (
    ANSWER_KEY_MEMBER,
    FORMAT,
    MANIFEST,
    ROWS_MEMBER,
    canonical_json,
    member_entry,
)
from evaljig_fixtures._datasets.scripts import features_in, scripts_in
from evaljig_fixtures._datasets.source import DatasetSource
from evaljig_fixtures._datasets.task_module import render_task_module
from evaljig_fixtures._errors import BuildError

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
