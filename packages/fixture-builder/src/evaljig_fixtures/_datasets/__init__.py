"""Dataset packages: deterministic zips of a lighteval task module, its rows, a gateway answer key and a manifest."""

from evaljig_fixtures._datasets.build import dataset_manifest_schema, dataset_package_bytes, write_dataset_package
from evaljig_fixtures._datasets.package import DatasetPackage, load_dataset_package
from evaljig_fixtures._datasets.source import DatasetSource, read_rows_jsonl

__all__ = [
    "DatasetPackage",
    "DatasetSource",
    "dataset_manifest_schema",
    "dataset_package_bytes",
    "load_dataset_package",
    "read_rows_jsonl",
    "write_dataset_package",
]
