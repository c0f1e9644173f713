"""Print the test files of one CI shard: ``python ci/shard_tests.py INDEX TOTAL`` (INDEX from 1).

Files are dealt round-robin in sorted order, so every test file lands in exactly one shard
and the split is stable between runs. The output is meant for ``nox -s tests -- $(...)``.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_roots() -> list[str]:
    """pytest's ``testpaths`` from pyproject.toml: the shards cover exactly what a plain ``pytest`` runs."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    roots: list[str] = config["tool"]["pytest"]["ini_options"]["testpaths"]
    return roots


def shard(index: int, total: int) -> list[str]:
    found = [path for root in test_roots() for path in ROOT.glob(f"{root}/**/test_*.py")]
    files = sorted(p.relative_to(ROOT).as_posix() for p in found)
    return [f for n, f in enumerate(files) if n % total == index - 1]


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not all(a.isdigit() for a in argv) or not 1 <= int(argv[0]) <= int(argv[1]):
        print("usage: shard_tests.py INDEX TOTAL  (1 <= INDEX <= TOTAL)", file=sys.stderr)
        return 2
    print(" ".join(shard(int(argv[0]), int(argv[1]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
