"""evaljig-review: readable golden snapshots for pytest, and ``evaljig review`` of what a snapshot update changed.

The pytest plugin (registered on install) gives every test a ``golden`` fixture and fails a run
on golden folders whose test module is gone. ``evaljig-review`` (``evaljig review``) compares the
working tree with a git revision and sorts every changed golden, fixture, cassette and baseline
into new / removed / value-changed / format-only / reordered, with key-path diffs.
"""

from __future__ import annotations

from evaljig_review._errors import ReviewError
from evaljig_review._golden import (
    GOLDEN_DIRNAME,
    Golden,
    GoldenPlacementError,
    GoldenSettings,
    TextGolden,
    YamlGolden,
    dump_yaml,
    to_plain,
)


def review_main(argv: list[str] | None = None) -> int:
    """``evaljig-review ARGS`` in this process (``evaljig review`` calls it); returns the exit code."""
    from evaljig_review._cli import main

    return main(argv)


__all__ = [
    "GOLDEN_DIRNAME",
    "Golden",
    "GoldenPlacementError",
    "GoldenSettings",
    "ReviewError",
    "TextGolden",
    "YamlGolden",
    "dump_yaml",
    "review_main",
    "to_plain",
]
