from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from importlib.resources import as_file
from pathlib import Path
from typing import Any

import pytest

from evaljig_corpus import corpus_root

Edit = Callable[[str, Callable[[dict[str, Any]], None]], None]


@pytest.fixture
def corpus_copy(tmp_path: Path) -> Path:
    """A writable copy of the installed corpus, to break on purpose."""
    with as_file(corpus_root()) as source:
        shutil.copytree(source, tmp_path / "corpus")
    return tmp_path / "corpus"


def own_corpus(corpus_copy: Path, *capabilities: str) -> Path:
    """A provider author's corpus: only the capability folders they support, no charter."""
    for entry in corpus_copy.iterdir():
        if entry.name not in capabilities:
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    return corpus_copy


@pytest.fixture
def edit(corpus_copy: Path) -> Edit:
    """``edit("chat/valid_baseline", change)``: load the fixture JSON, let ``change`` mutate it, write it back."""

    def _edit(relative: str, change: Callable[[dict[str, Any]], None]) -> None:
        path = corpus_copy / f"{relative}.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        change(data)
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")

    return _edit
