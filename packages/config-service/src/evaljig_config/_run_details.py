"""What lighteval recorded per sample: its details files, read back to count the answers that came back empty.

lighteval scores an empty answer 0 like a wrong one, and its results JSON cannot tell them apart;
its details (``--save-details``, one parquet file per task) keep each answer's text and reasoning.
They are read with pyarrow, which lighteval's own ``datasets`` dependency brings wherever lighteval
runs; where it is missing nothing is counted (``None``), rather than guessed.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class AnswerCounts:
    """Answers lighteval recorded, those that came back empty, and the empty ones that carried reasoning."""

    answers: int
    empty: int
    reasoning_only: int


def count_answers(responses: Iterable[Mapping[str, Any] | None]) -> AnswerCounts:
    """Count lighteval ``model_response`` records: an answer is empty when its first text is ``""``.

    lighteval turns a missing ``content`` into ``[""]``; a reasoning that is a non-blank string
    next to an empty answer is counted in ``reasoning_only``.
    """
    answers = empty = reasoning_only = 0
    for response in responses:
        texts = list((response or {}).get("text") or [""])
        answers += 1
        if texts[0]:
            continue
        empty += 1
        reasonings = (response or {}).get("reasonings") or []
        if any(isinstance(r, str) and r.strip() for r in reasonings):
            reasoning_only += 1
    return AnswerCounts(answers, empty, reasoning_only)


def read_answer_counts(out_dir: Path) -> AnswerCounts | None:
    """Counts over every ``details_*.parquet`` under ``out_dir``; ``None`` without details or without pyarrow."""
    files = sorted(out_dir.glob("details/**/details_*.parquet"))
    if not files:
        return None
    try:
        parquet = importlib.import_module("pyarrow.parquet")
    except ImportError:
        return None
    responses: list[Mapping[str, Any] | None] = []
    for path in files:
        responses += parquet.read_table(path, columns=["model_response"]).column("model_response").to_pylist()
    return count_answers(responses)
