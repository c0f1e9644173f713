"""``Builder`` (one named regen step owning its output files), the ``BuildContext`` it runs in, and the registry rules.

Optional resources are ``None`` when unavailable; a builder that ``requires`` one is skipped (its
committed files left untouched) instead of failing or writing something partial.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import MappingProxyType

from evaljig_common import write_bytes_atomic
from evaljig_fixtures._errors import BuildError


# --- ``BuildContext``: what a builder may use besides its own inputs, and the named requirements it can declare.
#
# Optional resources are ``None`` when unavailable; a builder that ``requires`` one is skipped
# (its committed files left untouched) instead of failing or writing something partial.
@dataclass(frozen=True, slots=True)
class Upstream:
    """An OpenAI-compatible endpoint to record answers from, and the variable holding its key."""

    base_url: str
    """Its OpenAI base URL, ``/v1`` included (``https://api.openai.com/v1``)."""
    api_key_env: str | None = None
    """The environment variable with its key (sent upstream by the recording gateway, never written)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """What a builder's ``freshness`` check found about one of its files: ``stale`` (drift) or a ``note``."""

    kind: str  # "stale" | "note"
    path: str
    text: str


@dataclass(frozen=True, slots=True)
class BuildContext:
    """Shared by every builder of one ``regen`` run."""

    committed: Path
    """The committed fixtures folder (``--out``); read it through ``input()``, never write it."""
    staging: Path
    """The temporary folder builders write into (their ``out_dir``); regen syncs or compares it afterwards."""
    check: bool = False
    lighteval: bool = False
    """Whether the real lighteval runs in this interpreter (its CLI beside it); ``--no-lighteval`` turns it off."""
    no_lighteval: bool = False
    """``--no-lighteval`` was given: why ``lighteval`` is off, whether or not it is installed."""
    upstream: Upstream | None = None
    """``--upstream``: the real endpoint cassette builders record from (``None``: an ephemeral gateway)."""
    command: str = "evaljig-fixtures regen"
    """The command that runs this regen from where it was started (a team's build script: ``python PATH``);
    what a stale recording's re-record hint starts with."""
    match_ignore: frozenset[str] | None = None
    """``--match-ignore``: request fields a replay leaves out of the match, so no recording is stale for them
    (``None``: the gateway's default set)."""
    local_tables: dict[str, str] = field(default_factory=dict)
    """lighteval's results tables of this run's recordings from an ephemeral gateway (no ``--upstream``), by what
    the run read (the provider spec's and dataset package's bytes): a CLI golden of the same two built after
    one uses its table instead of starting lighteval again, so a first build runs lighteval once, not twice."""

    def input(self, relative: str) -> Path:
        """A fixture another builder produces: this run's rebuilt copy if there is one, else the committed one."""
        for root in (self.staging, self.committed):
            candidate = fixture_path(root, relative)
            if candidate.is_file():
                return candidate
        raise BuildError(f"input fixture {relative} is neither rebuilt in this run nor committed in {self.committed}")


def _lighteval(ctx: BuildContext) -> str | None:
    if ctx.lighteval:
        return None
    if ctx.no_lighteval:
        return "--no-lighteval: this run leaves out the builders that run lighteval"
    return (
        "lighteval is not importable in this Python: install the tested stack with "
        "pip install 'evaljig[lighteval]' (uv: uv add 'evaljig[lighteval]') and run the same build script "
        "again; `evaljig-config lighteval check` says what is missing"
    )


REQUIREMENTS: Mapping[str, Callable[[BuildContext], str | None]] = MappingProxyType({"lighteval": _lighteval})
"""Requirement name -> why it is unmet in a context (``None`` when met). Add an entry for a new kind."""


def unmet_requirements(requires: Iterable[str], ctx: BuildContext) -> list[str]:
    """One reason per unmet requirement, in sorted order."""
    return [reason for name in sorted(requires) if (reason := REQUIREMENTS[name](ctx)) is not None]


# --- ``Builder``: one named regen step that writes the fixture files it owns, and nothing else.
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


def fixture_path(root: Path, relative: str) -> Path:
    """``root/relative`` for a POSIX path relative to a fixtures folder (how builders name their outputs)."""
    return root.joinpath(*PurePosixPath(relative).parts)


def write_output(out_dir: Path, relative: str, data: bytes) -> Path:
    """Write one output file (atomically) at ``out_dir/relative``; builders return what this returns."""
    return write_bytes_atomic(fixture_path(out_dir, relative), data)


# --- Registry rules (one name, one owner per output) and ``--only`` selection.
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
