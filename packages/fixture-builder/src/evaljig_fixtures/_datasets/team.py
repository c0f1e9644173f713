"""A team's own dataset package: rows ``{"question", "choices", "answer"}`` (a JSONL file or code) to a zip.

The zip is the format of evaljig's own ``fixtures/datasets/*.zip`` (``evaljig-dataset-package/1``,
its manifest described by ``dataset_manifest_schema()``), built by the same code, so it is
byte-stable and ``load_dataset_package`` reads it. Rows only need the three fields; ``id`` and
``subject`` are filled in (``<name>-0001``, ``default``) when absent.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

from evaljig_common import write_bytes_atomic
from evaljig_fixtures._datasets.build import package_bytes
from evaljig_fixtures._datasets.source import DatasetSource

MANIFEST_SCHEMA = "dataset-manifest.schema.json"


def dataset_manifest_schema() -> dict[str, Any]:
    """The JSON Schema of a dataset package's ``manifest.json`` (shipped as package data)."""
    text = files("evaljig_fixtures").joinpath("data", MANIFEST_SCHEMA).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def dataset_package_bytes(source: DatasetSource) -> bytes:
    """The zip's bytes: the same source gives the same bytes, on any machine."""
    return package_bytes(source)


def write_dataset_package(path: Path, source: DatasetSource) -> Path:
    """Write the package of ``source`` to ``path`` atomically; returns ``path``."""
    return write_bytes_atomic(path, package_bytes(source))
