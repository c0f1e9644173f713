"""Benchmark: hostile duplicate entries in bulk are refused fast by the dataset-package loader.

Prints how long a package with 20,000 zip entries (two repeated) takes to be refused, and the
ratio to the one-second target, split into zipfile's own parsing and the loader's checks (the
corpus loader's figure is ``packages/capability-corpus/benchmarks/bench_fixture_loader.py``).
It never asserts on time. Usage: ``python bench_package_loader.py [--entries N]``.
"""

from __future__ import annotations

import argparse
import io
import tempfile
import time
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

from evaljig_fixtures import DatasetPackageError, load_dataset_package

TARGET_SECONDS = 1.0


def zip_bytes(entries: int) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate names we write on purpose
        with zipfile.ZipFile(buffer, "w") as archive:
            for i in [*range(entries), 3, 5]:
                archive.writestr(f"extra/{i}.txt", b"")
    return buffer.getvalue()


def timed(label: str, run: Callable[[], None]) -> float:
    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    print(f"{label:<52} {seconds:7.3f} s  ({seconds / TARGET_SECONDS:.2f}x the {TARGET_SECONDS:.0f} s target)")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=20_000)
    args = parser.parse_args()

    raw = zip_bytes(args.entries)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "crowded.eval752.zip"
        path.write_bytes(raw)

        def refuse_entries() -> None:
            try:
                load_dataset_package(path)
            except DatasetPackageError as exc:
                if "appears more than once" not in str(exc):
                    raise
            else:
                raise SystemExit("expected a DatasetPackageError")

        def zipfile_only() -> None:
            with zipfile.ZipFile(io.BytesIO(raw)) as archive:
                archive.infolist()

        total = timed(f"package with {args.entries:,} entries refused", refuse_entries)
        parse = timed("  of which zipfile reads the central directory", zipfile_only)
        print(f"{'  of which the loader checks names and duplicates':<52} {max(total - parse, 0.0):7.3f} s")


if __name__ == "__main__":
    main()
