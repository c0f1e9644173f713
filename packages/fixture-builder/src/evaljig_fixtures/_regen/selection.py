"""Registry rules (one name, one owner per output) and ``--only`` selection."""

from __future__ import annotations

from collections.abc import Sequence

from evaljig_fixtures._regen.builder import Builder


def registry_problems(builders: Sequence[Builder]) -> list[str]:
    """Duplicate names and outputs owned by two builders (one file, one owner)."""
    problems = []
    names = [b.name for b in builders]
    problems += [f"builder name {n!r} is used twice" for n in sorted({n for n in names if names.count(n) > 1})]
    for i, first in enumerate(builders):
        for second in builders[i + 1 :]:
            for output in second.outputs:
                if first.owns(output) or any(second.owns(o) for o in first.outputs):
                    problems.append(f"builders {first.name} and {second.name} both own {output}")
    return problems


def select(builders: Sequence[Builder], names: Sequence[str] | None) -> tuple[Builder, ...]:
    """The builders named (in registry order), or all; an unknown name raises ``ValueError``."""
    if not names:
        return tuple(builders)
    known = {b.name for b in builders}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown builder(s) {', '.join(unknown)} (known: {', '.join(b.name for b in builders)})")
    return tuple(b for b in builders if b.name in names)
