"""Loading an answer key (question text -> answer) from JSON or JSONL."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import orjson

from evaljig_common import EvaljigError
from evaljig_gateway._content import AnswerKey


class AnswerKeyError(EvaljigError, ValueError):
    """An answer-key file that cannot be used; the message names the file and the place."""


def load_answer_key(path: Path) -> AnswerKey:
    """Read ``{"question": "answer", ...}`` (.json) or ``{"question", "answer"}`` lines (.jsonl)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AnswerKeyError(f"{path}: cannot read answer key: {exc}") from exc
    if path.suffix == ".jsonl":
        return AnswerKey(_from_jsonl(path, text))
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise AnswerKeyError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise AnswerKeyError(f"{path}: expected an object mapping question text to answer")
    return AnswerKey(_checked(path, data))


def _from_jsonl(path: Path, text: str) -> dict[str, str]:
    answers: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise AnswerKeyError(f"{path}:{number}: not valid JSON: {exc}") from exc
        if (
            not isinstance(row, dict)
            or not isinstance(row.get("question"), str)
            or not isinstance(row.get("answer"), str)
        ):
            raise AnswerKeyError(f'{path}:{number}: expected {{"question": str, "answer": str}}')
        answers[row["question"]] = row["answer"]
    return answers


def _checked(path: Path, data: Mapping[object, object]) -> dict[str, str]:
    for question, answer in data.items():
        if not isinstance(question, str) or not question.strip() or not isinstance(answer, str):
            raise AnswerKeyError(f"{path}: entry {question!r}: question and answer must be non-empty strings")
    return {str(q): str(a) for q, a in data.items()}
