"""evaljig-fixtures: the deterministic fixture builder (``regen_main``, the builder factories), dataset packages
and cassette replay.

The capability fixture corpus and its conformance helpers are ``evaljig_corpus``'s. Each public
name is written twice: in ``__all__`` and in the ``TYPE_CHECKING`` imports, which also tell
``__getattr__`` where it lives. The LEV pytest plugin imports this package into every session, so
each name is imported on first use (vcrpy, httpx, litellm stay unloaded).
"""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for type checkers; at run time __getattr__ imports each name from the module named here
    from evaljig_common import CANONICAL_BASE_URL
    from evaljig_fixtures._builder_factories import (
        cassette_builder,
        cli_stdout_golden_builder,
        config_golden_builder,
        dataset_package_builder,
        provider_builder,
    )
    from evaljig_fixtures._cassettes import replaying
    from evaljig_fixtures._dataset_load import DatasetPackage, dataset_manifest_schema, load_dataset_package
    from evaljig_fixtures._dataset_write import (
        DatasetSource,
        dataset_package_bytes,
        read_rows_jsonl,
        write_dataset_package,
    )
    from evaljig_fixtures._errors import BuildError, DatasetPackageError, EvaljigFixturesError
    from evaljig_fixtures._init_command import init_main
    from evaljig_fixtures._lev_harness import LEV_FAKE_KEY, LevDataset, LevInvocation, LevTrace, leaked_files
    from evaljig_fixtures._regen_builder import BuildContext, Builder, Upstream, write_output
    from evaljig_fixtures._regen_command import regen_main

__all__ = [
    "CANONICAL_BASE_URL",
    "LEV_FAKE_KEY",
    "BuildContext",
    "BuildError",
    "Builder",
    "DatasetPackage",
    "DatasetPackageError",
    "DatasetSource",
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
    "regen_main",
    "replaying",
    "write_dataset_package",
    "write_output",
]


@functools.cache
def _defining_modules() -> dict[str, str]:
    """Public name -> its module, read from the ``TYPE_CHECKING`` imports above (the one place they are written)."""
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    return {
        alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module is not None
        for alias in node.names
    }


def __getattr__(name: str) -> object:
    """PEP 562: a public name, imported from its module on first use."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(importlib.import_module(_defining_modules()[name]), name)
    globals()[name] = value  # later lookups find it here: no second import
    return value
