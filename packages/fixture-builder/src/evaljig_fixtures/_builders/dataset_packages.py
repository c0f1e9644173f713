"""Builders ``mini-mmlu`` and ``polyglot``: dataset packages generated from the question data in ``data/``."""

from __future__ import annotations

from pathlib import Path

from evaljig_fixtures._datasets.build import PACKAGE_SUFFIX, package_bytes
from evaljig_fixtures._datasets.source import load_dataset_source
from evaljig_fixtures._errors import BuildError
from evaljig_fixtures._regen.builder import Builder, write_output
from evaljig_fixtures._regen.context import BuildContext

DATASETS_DIR = "datasets"


def dataset_builder(name: str, source_file: str, description: str) -> Builder:
    """A builder writing ``datasets/<name>.eval752.zip`` from ``data/<source_file>``."""
    relative = f"{DATASETS_DIR}/{name}{PACKAGE_SUFFIX}"

    def build(out_dir: Path, ctx: BuildContext) -> list[Path]:
        source = load_dataset_source(source_file)
        if source.name != name:
            raise BuildError(f"evaljig_fixtures/data/{source_file}: field 'name': {source.name!r}, expected {name!r}")
        return [write_output(out_dir, relative, package_bytes(source))]

    return Builder(name=name, outputs=(relative,), build=build, description=description)


MINI_MMLU = dataset_builder("mini-mmlu", "mini_mmlu.json", "MMLU-style multiple choice over 7 subjects")
POLYGLOT = dataset_builder(
    "polyglot", "polyglot.json", "multilingual multiple choice: 11 scripts, combining marks, emoji and ZWJ"
)
