"""The gateway answer key: which letter the fake model gives, right for a fixed share of questions.

Questions are ranked by a digest of (dataset, id) and the first ``round(accuracy * n)`` get the
gold letter, so the share is exact and stable, and scores are neither 0 nor 1.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from evaljig_fixtures._datasets.source import LETTERS


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
