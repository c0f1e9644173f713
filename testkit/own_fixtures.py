"""evaljig's own build script (``scripts/testing/build_lighteval_fixture.py``), loaded as a module for tests.

It is a script, not a package module: tests load it from its path, as ``make regen`` runs it.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BUILD_SCRIPT = ROOT / "scripts" / "testing" / "build_lighteval_fixture.py"
FIXTURES = ROOT / "fixtures"


@functools.cache
def build_script() -> ModuleType:
    """The script's module (its ``BUILDERS``, ``DatasetSource``s, ...); ``__main__`` is not run."""
    spec = importlib.util.spec_from_file_location("evaljig_build_lighteval_fixture", BUILD_SCRIPT)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {BUILD_SCRIPT}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def dataset_source(name: str) -> Any:
    """The script's ``DatasetSource`` of one of evaljig's own datasets: ``mini-mmlu`` or ``polyglot``."""
    return {"mini-mmlu": build_script().MINI_MMLU_SOURCE, "polyglot": build_script().POLYGLOT_SOURCE}[name]
