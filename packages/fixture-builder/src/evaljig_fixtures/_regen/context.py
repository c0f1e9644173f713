"""``BuildContext``: what a builder may use besides its own inputs, and the named requirements it can declare.

Optional resources are ``None`` when unavailable; a builder that ``requires`` one is skipped
(its committed files left untouched) instead of failing or writing something partial.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import MappingProxyType

from evaljig_fixtures._errors import BuildError


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
    upstream: Upstream | None = None
    """``--upstream``: the real endpoint cassette builders record from (``None``: an ephemeral gateway)."""
    command: str = "evaljig-fixtures regen"
    """The command that runs this regen from where it was started (a team's build script: ``python PATH``);
    what a stale recording's re-record hint starts with."""
    match_ignore: frozenset[str] | None = None
    """``--match-ignore``: request fields a replay leaves out of the match, so no recording is stale for them
    (``None``: the gateway's default set)."""

    def input(self, relative: str) -> Path:
        """A fixture another builder produces: this run's rebuilt copy if there is one, else the committed one."""
        parts = PurePosixPath(relative).parts
        for root in (self.staging, self.committed):
            candidate = root.joinpath(*parts)
            if candidate.is_file():
                return candidate
        raise BuildError(f"input fixture {relative} is neither rebuilt in this run nor committed in {self.committed}")


def _lighteval(ctx: BuildContext) -> str | None:
    if ctx.lighteval:
        return None
    return (
        "lighteval is not available here: install it (pip install 'evaljig[lighteval]'; "
        "in evaljig's own repository `make regen`)"
    )


REQUIREMENTS: Mapping[str, Callable[[BuildContext], str | None]] = MappingProxyType({"lighteval": _lighteval})
"""Requirement name -> why it is unmet in a context (``None`` when met). Add an entry for a new kind."""


def unmet_requirements(requires: Iterable[str], ctx: BuildContext) -> list[str]:
    """One reason per unmet requirement, in sorted order."""
    return [reason for name in sorted(requires) if (reason := REQUIREMENTS[name](ctx)) is not None]
