"""Helpers for tests that break a copy of the corpus: a provider author's own corpus, the ``edit`` signature."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

Edit = Callable[[str, Callable[[dict[str, Any]], None]], None]
"""``edit("chat/valid_baseline", change)``: the ``edit`` fixture's signature."""


def own_corpus(corpus_copy: Path, *capabilities: str) -> Path:
    """A provider author's corpus: only the capability folders they support, no charter."""
    for entry in corpus_copy.iterdir():
        if entry.name not in capabilities:
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    return corpus_copy
