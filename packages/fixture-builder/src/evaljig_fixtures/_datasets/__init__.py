"""Dataset packages: deterministic zips of a lighteval task module, its rows, a gateway answer key and a manifest."""

from evaljig_fixtures._datasets.package import DatasetPackage, load_dataset_package
from evaljig_fixtures._datasets.source import DatasetSource, load_dataset_source

__all__ = ["DatasetPackage", "DatasetSource", "load_dataset_package", "load_dataset_source"]
