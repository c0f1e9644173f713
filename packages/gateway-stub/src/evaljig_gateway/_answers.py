"""Loading an answer key (question text -> answer, or -> a scripted chat turn) from JSON or JSONL."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from evaljig_common import EvaljigError
from evaljig_gateway._content import AnswerKey
from evaljig_gateway._script import ScriptError, parse_script


class AnswerKeyError(EvaljigError, ValueError):
    """An answer-key file that cannot be used; the message names the file and the place."""


def load_answer_key(path: Path) -> AnswerKey:
    """Read ``{"question": answer, ...}`` (.json) or ``{"question", "answer"}`` lines (.jsonl).

    An answer is a string, or an object scripting the assistant's turn(s) (see ``_script``).
    """
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
    for question, answer in data.items():
        if not question.strip():  # a JSON object's keys are strings; the answer's type is checked by parse_script
            raise AnswerKeyError(f"{path}: entry {question!r}: the question must be a non-empty string")
        _check_script(str(path), question, answer)
    return AnswerKey(data)


def _from_jsonl(path: Path, text: str) -> dict[str, str | Mapping[str, Any]]:
    answers: dict[str, str | Mapping[str, Any]] = {}
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
            or not isinstance(row.get("answer"), (str, dict))
        ):
            raise AnswerKeyError(f'{path}:{number}: expected {{"question": str, "answer": str or scripted turn}}')
        _check_script(f"{path}:{number}", row["question"], row["answer"])
        answers[row["question"]] = row["answer"]
    return answers


def _check_script(where: str, question: str, answer: str | Mapping[str, Any]) -> None:
    try:
        parse_script(answer, "answer")
    except ScriptError as exc:
        raise AnswerKeyError(f"{where}: entry {question!r}: {exc}") from exc
