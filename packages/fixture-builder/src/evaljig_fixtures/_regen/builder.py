"""``Builder``: one named regen step that writes the fixture files it owns, and nothing else."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from evaljig_common import write_bytes_atomic
from evaljig_fixtures._regen.context import REQUIREMENTS, BuildContext, Finding

BuildFunction = Callable[[Path, BuildContext], list[Path]]
FreshnessCheck = Callable[[BuildContext], list[Finding]]


@dataclass(frozen=True, slots=True)
class Builder:
    """``build(out_dir, ctx)`` writes under ``out_dir`` (the fixtures layout) and returns the paths it wrote.

    ``outputs`` are the relative paths the builder owns: files, or folders ending in ``/`` (every
    file below them). Regen deletes owned files a build no longer produces, flags unowned ones, and
    refuses writes outside them. ``requires`` names entries of ``REQUIREMENTS`` (``lighteval``).
    ``freshness`` (optional) says whether what the builder's files were made *for* still holds: a
    recording cannot be rebuilt without its upstream, so its carried-over bytes never drift, yet it
    goes stale when the inputs that shaped its requests change. It runs even when the builder is
    skipped (it needs nothing the build needs) and its ``stale`` findings count as drift.
    """

    name: str
    outputs: tuple[str, ...]
    build: BuildFunction
    requires: frozenset[str] = field(default_factory=frozenset)
    description: str = ""
    freshness: FreshnessCheck | None = None

    def __post_init__(self) -> None:
        if not self.name or not all(c.isalnum() or c in "-_" for c in self.name):
            raise ValueError(f"builder name {self.name!r}: use letters, digits, '-' and '_'")
        if not self.outputs:
            raise ValueError(f"builder {self.name}: field 'outputs': declare at least one owned path")
        for output in self.outputs:
            parts = PurePosixPath(output).parts
            if output.startswith("/") or "\\" in output or not parts or any(p in (".", "..") for p in parts):
                raise ValueError(f"builder {self.name}: field 'outputs': {output!r} is not a relative POSIX path")
        unknown = sorted(set(self.requires) - set(REQUIREMENTS))
        if unknown:
            known = ", ".join(REQUIREMENTS)
            raise ValueError(f"builder {self.name}: field 'requires': unknown {', '.join(unknown)} (known: {known})")

    def owns(self, relative: str) -> bool:
        return any(relative == o or (o.endswith("/") and relative.startswith(o)) for o in self.outputs)


def write_output(out_dir: Path, relative: str, data: bytes) -> Path:
    """Write one output file (atomically) at ``out_dir/relative``; builders return what this returns."""
    return write_bytes_atomic(out_dir.joinpath(*PurePosixPath(relative).parts), data)
