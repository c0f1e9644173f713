"""The manifest's claims against what the package holds: rows, subjects, answer key, task module.

The members' hashes only prove the bytes are the ones the manifest lists; a manifest written by
hand (or by a tool with a bug) can still misstate them: ``rows: 9999`` for 42 rows, an answer
key for other questions, a task module that defines another task. Each problem names the
member or manifest field and the reason.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

from evaljig_fixtures._datasets.manifest import ANSWER_KEY_MEMBER, MANIFEST, ROWS_MEMBER
from evaljig_fixtures._datasets.source import LETTERS, row_problems

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
