"""Fixtures of the corpus tests: a writable copy of the installed corpus and a way to edit its fixtures."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from importlib.resources import as_file
from pathlib import Path
from typing import Any

import pytest

from evaljig_corpus import corpus_root

from .corpus_copies import Edit


@pytest.fixture
def corpus_copy(tmp_path: Path) -> Path:
    """A writable copy of the installed corpus, to break on purpose."""
    with as_file(corpus_root()) as source:
        shutil.copytree(source, tmp_path / "corpus")
    return tmp_path / "corpus"


@pytest.fixture
def edit(corpus_copy: Path) -> Edit:
    """``edit("chat/valid_baseline", change)``: load the fixture JSON, let ``change`` mutate it, write it back."""

    def _edit(relative: str, change: Callable[[dict[str, Any]], None]) -> None:
        path = corpus_copy / f"{relative}.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        change(data)
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")

    return _edit
