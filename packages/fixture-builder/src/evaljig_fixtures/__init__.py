"""evaljig-fixtures: the deterministic fixture builder (``evaljig-fixtures regen``), dataset packages and cassettes.

The capability fixture corpus and its conformance helpers are ``evaljig_corpus``'s.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from evaljig_fixtures._datasets import DatasetPackage, load_dataset_package
from evaljig_fixtures._errors import BuildError, DatasetPackageError, EvaljigFixturesError

if TYPE_CHECKING:  # imported on first use: vcrpy is not needed to load a dataset package
    from evaljig_fixtures._cassettes import CANONICAL_BASE_URL, recording, replaying

__all__ = [
    "CANONICAL_BASE_URL",
    "BuildError",
    "DatasetPackage",
    "DatasetPackageError",
    "EvaljigFixturesError",
    "load_dataset_package",
    "recording",
    "replaying",
]

_LAZY = dict.fromkeys(("CANONICAL_BASE_URL", "recording", "replaying"), "evaljig_fixtures._cassettes")


def __getattr__(name: str) -> object:
    """PEP 562: the cassette helpers on first use (vcrpy is imported only then)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value  # later lookups find it here: no second import
    return value
