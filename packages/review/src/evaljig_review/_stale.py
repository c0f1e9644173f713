"""A team's fixture set, as its build script declares it, and the recordings that went stale.

A team declares its fixtures in a build script (the one ``evaljig init`` scaffolds): a list of
``Builder`` objects handed to ``evaljig_fixtures.regen_main(BUILDERS, fixtures=FOLDER)``. The
review runs that script the way Python would (``__main__``, its folder first on ``sys.path``)
with ``regen_main`` standing in to catch the builders and the folder instead of building — so
the set is exactly what the team's regen uses, with no second description of it to drift.
Then each builder's public ``freshness`` check (the one ``regen --check`` runs: a cassette's
``recorded-for.json`` against the working tree's provider and dataset) says which recordings
no longer match what they were recorded for.
"""

from __future__ import annotations

import importlib.util
import runpy
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class FixtureSet:
    """One fixtures folder, the builders that own its files, and the script that declared them."""

    folder: Path
    builders: tuple[Any, ...] = ()
    script: str | None = None

    def builder_of(self, relative: str) -> str | None:
        """The name of the builder owning ``relative`` (a path inside the folder), if any."""
        for builder in self.builders:
            if builder.owns(relative):
                return str(builder.name)
        return None


@dataclass(frozen=True)
class Stale:
    """A recording whose recorded-for inputs no longer match the working tree."""

    path: str
    builder: str
    text: str


@dataclass
class Found:
    sets: list[FixtureSet] = field(default_factory=list)
    stale: list[Stale] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class _Declared(Exception):  # noqa: N818 - control flow: the script reached its regen_main call
    def __init__(self, builders: Sequence[Any], fixtures: Path) -> None:
        super().__init__("declared")
        self.builders = tuple(builders)
        self.fixtures = fixtures


def _declare(builders: Sequence[Any], argv: Sequence[str] | None = None, *, fixtures: Path, **_: Any) -> int:
    raise _Declared(builders, Path(fixtures))


@contextmanager
def _standing_in(script: Path) -> Iterator[None]:
    """``regen_main`` caught, ``sys.argv``/``sys.path`` as for ``python SCRIPT``; all restored after."""
    import evaljig_fixtures

    saved = vars(evaljig_fixtures).get("regen_main")
    saved_argv, saved_path = sys.argv, list(sys.path)
    evaljig_fixtures.regen_main = _declare
    sys.argv = [str(script)]
    sys.path.insert(0, str(script.parent))
    try:
        yield
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
        if saved is None:
            del evaljig_fixtures.regen_main  # its lazy import comes back
        else:
            evaljig_fixtures.regen_main = saved


def load_build_script(root: Path, relative: str) -> FixtureSet:
    """The fixture set the script at ``root/relative`` declares; ``ValueError`` saying why when it declares none."""
    script = root / relative
    try:
        with _standing_in(script):
            runpy.run_path(str(script), run_name="__main__")
    except _Declared as declared:
        folder = declared.fixtures if declared.fixtures.is_absolute() else Path.cwd() / declared.fixtures
        return FixtureSet(folder.resolve(), declared.builders, relative)
    except SystemExit as exc:
        raise ValueError(f"{relative}: exited ({exc.code}) before calling regen_main") from None
    except Exception as exc:
        raise ValueError(f"{relative}: cannot load: {type(exc).__name__}: {exc}") from None
    raise ValueError(f"{relative}: never calls evaljig_fixtures.regen_main(BUILDERS, fixtures=...)")


def looks_like_build_script(text: str) -> bool:
    """A script that hands builders to ``regen_main`` under ``__main__`` (what ``evaljig init`` writes)."""
    return "regen_main(" in text and "evaljig_fixtures" in text and "__main__" in text and "def regen_main" not in text


def fixture_builder_installed() -> bool:
    """Whether evaljig-fixtures is importable here (the build scripts and the freshness checks need it)."""
    return importlib.util.find_spec("evaljig_fixtures") is not None


def stale_recordings(fixture_set: FixtureSet, root: Path) -> tuple[list[Stale], list[str]]:
    """Each builder's ``freshness`` findings: ``stale`` ones, and notes (a recording of unknown inputs)."""
    from evaljig_fixtures import BuildContext

    stale: list[Stale] = []
    notes: list[str] = []
    if not fixture_set.folder.is_dir():
        return stale, notes
    command = f"python {fixture_set.script}" if fixture_set.script else "evaljig-fixtures regen"
    with tempfile.TemporaryDirectory(prefix="evaljig-review-") as staging:
        context = BuildContext(committed=fixture_set.folder, staging=Path(staging), command=command)
        for builder in fixture_set.builders:
            check = getattr(builder, "freshness", None)
            if check is None:
                continue
            try:
                findings = check(context)
            except Exception as exc:  # a team's builder: its failure is a note, never the review's crash
                notes.append(f"builder {builder.name}: freshness check failed: {type(exc).__name__}: {exc}")
                continue
            for finding in findings:
                where = _relative(fixture_set.folder / finding.path, root)
                if finding.kind == "stale":
                    stale.append(Stale(where, str(builder.name), finding.text))
                else:
                    notes.append(f"{where}: {finding.text}")
    return stale, notes


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()
