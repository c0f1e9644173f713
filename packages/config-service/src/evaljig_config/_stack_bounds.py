"""The lighteval stack evaljig is tested with: one table of bounded packages, each with its reason.

A LEV run reaches far more than lighteval: litellm, the OpenAI SDK inside it, datasets,
transformers, huggingface_hub. Each of their releases can break a run that nothing of ours
changed (litellm 1.109 removed the disk cache lighteval 0.13 turns on at import). So the bounds
live here once, and everything else is this table:

- ``ci/lighteval-requirements.txt`` (what ``make lighteval-constraints`` resolves, and what the
  LEV matrix installs) lists :data:`LIGHTEVAL_STACK` line for line, and the meta-package's
  ``lighteval`` extra is :data:`LIGHTEVAL_EXTRA` (the stack, then :data:`RESOLVER_HINTS`); tests
  keep them equal, and another fails when a pin of ``ci/lighteval-constraints.txt`` falls
  outside a bound or a hint;
- ``docs/project.md`` shows the table (a test keeps it equal);
- ``evaljig-config lighteval check`` compares what is installed with it before importing
  anything, so a mismatch is one line: the package, the installed version, the tested range,
  why, and the exact command that fixes it.

Lower bounds are the oldest release a run is proven with (the LEV matrix's pins, or the API a
package needs); upper bounds are the first release known to break, or the next major release,
which nobody has tested yet. ``nox -s adoption`` installs the newest releases the bounds admit
(no constraints file), and the nightly workflow runs the LEV matrix on them.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version


@dataclass(frozen=True)
class StackBound:
    """One package of the lighteval stack: the versions evaljig is tested with, and why."""

    name: str
    specifier: str
    why: str
    extras: str = ""

    @property
    def requirement(self) -> str:
        """The requirement line, as pip and uv take it: ``litellm>=1.106.2,<1.109``."""
        return f"{self.name}{self.extras}{self.specifier}"

    def admits(self, version: str) -> bool:
        """Whether ``version`` is in the tested range (a local label such as ``+cpu`` is allowed)."""
        try:
            parsed = Version(version)
        except InvalidVersion:
            return False
        return SpecifierSet(self.specifier).contains(parsed, prereleases=True)

    def fix(self) -> str:
        """The exact commands that install a tested version, for pip and for a uv project."""
        wanted = f"'{self.name}{self.specifier}'"
        return f"pip install {wanted} (in a uv project: uv add {wanted})"


#: The stack, in the order of :data:`LIGHTEVAL_STACK` (the extra's and the requirements file's lines).
STACK_BOUNDS: tuple[StackBound, ...] = (
    StackBound(
        "torch",
        "==2.13.0",
        "the release the LEV matrix runs; lighteval imports it, a litellm run never uses it "
        "(take its CPU wheel from your index or find-links)",
    ),
    StackBound("lighteval", "==0.13.0", "the release evaljig's LEV contract is proven against", extras="[litellm]"),
    StackBound(
        "litellm",
        ">=1.106.2,<1.109",
        "1.109 removed litellm.caching.disk_cache, which lighteval 0.13 turns on at import "
        "(`AttributeError: DISK`); 1.106.2 is the LEV matrix's pin",
    ),
    StackBound(
        "openai",
        ">=2.20,<4",
        "litellm sends every request through it (and retries 5xx/429 twice by itself); "
        "2.x (httpx) and 3.x (httpx2) are tested, 4 is not released",
    ),
    StackBound(
        "huggingface_hub",
        ">=0.34,<2",
        "litellm and transformers require <2; lighteval reads its offline switches (`HF_HUB_OFFLINE`)",
    ),
    StackBound(
        "datasets",
        ">=4.0,<6",
        "lighteval loads every task's rows with it (lighteval 0.13 needs >=4); 6 is not tested",
    ),
    StackBound(
        "transformers",
        ">=4.54,<6",
        "lighteval imports its model loader at every run (lighteval 0.13 needs >=4.54); 6 is not tested",
    ),
    StackBound("xxhash", "<4", "the release line the LEV matrix runs (datasets fingerprints with it); 4 is not tested"),
)

#: The requirement lines: ``ci/lighteval-requirements.txt``, and the first lines of the meta-package's extra.
LIGHTEVAL_STACK: tuple[str, ...] = tuple(bound.requirement for bound in STACK_BOUNDS)

#: Bounds that only steer pip's resolver, not tested ranges: ``lighteval check`` does not compare them.
#: The newest litellm in range (1.108.13) needs ``boto3>=1.43.117``; lighteval's inspect-ai needs
#: aiobotocore (through s3fs too), whose newest release needs ``botocore<1.43.118``: boto3 1.43.117 is
#: the one release both admit. Without these lines pip takes the newest boto3 first, and on the conflict walks back
#: through every inspect-ai release (123 of them, 35 MB each: about 4 GB fetched) and 38 aiobotocore
#: releases before it moves boto3: 44 s of resolving on this machine instead of 12, and "This is taking
#: longer than usual" on a user's screen. uv resolves the same set without them. ``nox -s adoption``
#: fails when pip says that again, so a release that moves the conflict is noticed.
RESOLVER_HINTS: tuple[StackBound, ...] = (
    StackBound(
        "boto3", "<1.43.118", "litellm 1.108 needs >=1.43.117; the newest aiobotocore's botocore range ends at 1.43.117"
    ),
    StackBound("botocore", "<1.43.118", "the newest aiobotocore (inspect-ai, s3fs) needs it"),
)

#: The meta-package's ``lighteval`` extra and the install hint: the stack, then the resolver hints.
LIGHTEVAL_EXTRA: tuple[str, ...] = LIGHTEVAL_STACK + tuple(hint.requirement for hint in RESOLVER_HINTS)


@dataclass(frozen=True)
class VersionMismatch:
    """An installed package of the stack outside the range evaljig is tested with."""

    bound: StackBound
    installed: str

    def line(self) -> str:
        """One line: which package, which version, the tested range and why, the exact fix."""
        bound = self.bound
        return (
            f"{bound.name} {self.installed} is installed, but evaljig is tested with {bound.name}{bound.specifier} "
            f"({bound.why}); fix: {bound.fix()}"
        )


def check_stack_versions(bounds: tuple[StackBound, ...] = STACK_BOUNDS) -> list[VersionMismatch]:
    """Every installed package of ``bounds`` whose version is outside its range (empty: all in range).

    A package that is not installed is not a mismatch: the import check names it.
    """
    mismatches: list[VersionMismatch] = []
    for bound in bounds:
        try:
            installed = importlib.metadata.version(bound.name)
        except importlib.metadata.PackageNotFoundError:
            continue
        if not bound.admits(installed):
            mismatches.append(VersionMismatch(bound, installed))
    return mismatches
