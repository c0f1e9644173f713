"""evaljig-fixtures: the deterministic fixture builder (``evaljig-fixtures regen``), dataset packages and cassettes.

The capability fixture corpus and its conformance helpers are ``evaljig_corpus``'s.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from evaljig_common import CANONICAL_BASE_URL  # the one placeholder, re-exported
from evaljig_fixtures._errors import BuildError, DatasetPackageError, EvaljigFixturesError

if TYPE_CHECKING:  # imported on first use: the LEV pytest plugin imports this package into every session
    from evaljig_fixtures._builders.team import (
        cassette_builder,
        cli_stdout_golden_builder,
        config_golden_builder,
        dataset_package_builder,
        provider_builder,
    )
    from evaljig_fixtures._cassettes import recording, replaying
    from evaljig_fixtures._datasets import (
        DatasetPackage,
        dataset_manifest_schema,
        dataset_package_bytes,
        load_dataset_package,
        read_rows_jsonl,
        write_dataset_package,
    )
    from evaljig_fixtures._init import init_main
    from evaljig_fixtures._lev_harness import LEV_FAKE_KEY, LevDataset, LevInvocation, LevTrace, leaked_files
    from evaljig_fixtures._regen import BuildContext, Builder, write_output
    from evaljig_fixtures._regen.command import regen_main
    from evaljig_fixtures._regen.context import Upstream

__all__ = [
    "CANONICAL_BASE_URL",
    "LEV_FAKE_KEY",
    "BuildContext",
    "BuildError",
    "Builder",
    "DatasetPackage",
    "DatasetPackageError",
    "EvaljigFixturesError",
    "LevDataset",
    "LevInvocation",
    "LevTrace",
    "Upstream",
    "cassette_builder",
    "cli_stdout_golden_builder",
    "config_golden_builder",
    "dataset_manifest_schema",
    "dataset_package_builder",
    "dataset_package_bytes",
    "init_main",
    "leaked_files",
    "load_dataset_package",
    "provider_builder",
    "read_rows_jsonl",
    "recording",
    "regen_main",
    "replaying",
    "write_dataset_package",
    "write_output",
]

#: Public name -> the module that defines it, imported on first use (vcrpy, httpx, litellm stay unloaded).
_LAZY = {
    **dict.fromkeys(("recording", "replaying"), "evaljig_fixtures._cassettes"),
    **dict.fromkeys(
        (
            "DatasetPackage",
            "dataset_manifest_schema",
            "dataset_package_bytes",
            "load_dataset_package",
            "read_rows_jsonl",
            "write_dataset_package",
        ),
        "evaljig_fixtures._datasets",
    ),
    **dict.fromkeys(
        (
            "cassette_builder",
            "cli_stdout_golden_builder",
            "config_golden_builder",
            "dataset_package_builder",
            "provider_builder",
        ),
        "evaljig_fixtures._builders.team",
    ),
    **dict.fromkeys(("BuildContext", "Builder", "write_output"), "evaljig_fixtures._regen"),
    "regen_main": "evaljig_fixtures._regen.command",
    "Upstream": "evaljig_fixtures._regen.context",
    "init_main": "evaljig_fixtures._init",
    **dict.fromkeys(
        ("LEV_FAKE_KEY", "LevDataset", "LevInvocation", "LevTrace", "leaked_files"), "evaljig_fixtures._lev_harness"
    ),
}


def __getattr__(name: str) -> object:
    """PEP 562: the cassette helpers on first use (vcrpy is imported only then)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value  # later lookups find it here: no second import
    return value
