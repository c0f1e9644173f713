"""Benchmark: a fixture with hostile duplicate keys in bulk is refused fast by the corpus loader.

Prints how long a fixture with 50,000 payload keys (two repeated) takes to be refused, and the
ratio to the one-second target. It never asserts on time.
Usage: ``python bench_fixture_loader.py [--keys N]``.
"""

from __future__ import annotations

import argparse
import time

from evaljig_corpus._fixture import parse_fixture

TARGET_SECONDS = 1.0


def fixture_text(keys: int) -> str:
    names = [f"k{i}" for i in range(keys)] + ["k7", "k42"]
    payload = "{" + ", ".join(f'"{k}": 0' for k in names) + "}"
    return (
        '{"schema_version": 1, "id": "chat.valid_baseline", "capability": "chat", "data_class": "synthetic",'
        ' "expected": "valid", "expected_error_pattern": null, "description": "Many keys.",'
        f' "payload": {{"model": "m", "messages": {payload}}}}}'
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=50_000)
    args = parser.parse_args()
    text = fixture_text(args.keys)
    start = time.perf_counter()
    fixture, problems = parse_fixture("chat", "valid_baseline", text)
    seconds = time.perf_counter() - start
    if fixture is not None or "duplicate key(s) 'k42', 'k7'" not in problems[0]:
        raise SystemExit(f"expected a duplicate-key problem, got {problems}")
    label = f"fixture with {args.keys:,} keys refused"
    print(f"{label:<52} {seconds:7.3f} s  ({seconds / TARGET_SECONDS:.2f}x the {TARGET_SECONDS:.0f} s target)")


if __name__ == "__main__":
    main()
