"""Benchmark: hostile duplicates in bulk are refused fast by the corpus and dataset-package loaders.

Prints how long a fixture with 50,000 payload keys (two repeated) and a package with 20,000
zip entries (two repeated) take to be refused, and the ratio to the one-second target; the
zip figure is split into zipfile's own parsing and the loader's checks. It never asserts on
time. Usage: ``python bench_loaders.py [--keys N] [--entries N]``.
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
from evaljig_fixtures.fixture import parse_fixture

TARGET_SECONDS = 1.0


def fixture_text(keys: int) -> str:
    names = [f"k{i}" for i in range(keys)] + ["k7", "k42"]
    payload = "{" + ", ".join(f'"{k}": 0' for k in names) + "}"
    return (
        '{"schema_version": 1, "id": "chat.valid_baseline", "capability": "chat", "data_class": "synthetic",'
        ' "expected": "valid", "expected_error_pattern": null, "description": "Many keys.",'
        f' "payload": {{"model": "m", "messages": {payload}}}}}'
    )


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
    parser.add_argument("--keys", type=int, default=50_000)
    parser.add_argument("--entries", type=int, default=20_000)
    args = parser.parse_args()

    text = fixture_text(args.keys)

    def refuse_keys() -> None:
        fixture, problems = parse_fixture("chat", "valid_baseline", text)
        if fixture is not None or "duplicate key(s) 'k42', 'k7'" not in problems[0]:
            raise SystemExit(f"expected a duplicate-key problem, got {problems}")

    timed(f"fixture with {args.keys:,} keys refused", refuse_keys)

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
