"""evaljig-fixtures: the deterministic fixture builder (``regen_main``, the builder factories), dataset packages
and cassette replay.

The capability fixture corpus and its conformance helpers are ``evaljig_corpus``'s. The LEV pytest
plugin imports this package into every session, so each public name is imported on first use
(``evaljig_common.lazy_exports``: vcrpy, httpx, litellm stay unloaded).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaljig_common import lazy_exports

if TYPE_CHECKING:  # for type checkers; at run time lazy_exports imports each name from the module named here
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
    from evaljig_fixtures._lev_harness import (
        LEV_FAKE_KEY,
        LevDataset,
        LevInvocation,
        LevTrace,
        assert_golden_file,
        leaked_files,
    )
    from evaljig_fixtures._lev_plugin import load_with_modules_together
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
    "assert_golden_file",
    "cassette_builder",
    "cli_stdout_golden_builder",
    "config_golden_builder",
    "dataset_manifest_schema",
    "dataset_package_builder",
    "dataset_package_bytes",
    "init_main",
    "leaked_files",
    "load_dataset_package",
    "load_with_modules_together",
    "provider_builder",
    "read_rows_jsonl",
    "regen_main",
    "replaying",
    "write_dataset_package",
    "write_output",
]


__getattr__ = lazy_exports(__name__, __file__, __all__)
