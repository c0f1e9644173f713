"""Golden module folders whose test module is gone: they fail the run, ``--snapshot-update`` deletes them.

syrupy (7.0) scans ``golden/<package>/`` only for packages with a collected test module, and
only with the golden formats some test of the session used; its ``--snapshot-update`` deletes
files and leaves their folders. So the goldens of a deleted package stayed forever, and
emptied folders piled up. A folder is an orphan when no ``<module>.py`` exists anywhere
under ``packages/<package>/`` (or the package itself is gone) — a fact of the file system,
not of which tests ran.

When it applies: to the packages the run was pointed at. A package is in scope when one of
the run's paths (the command line, else ``testpaths``) holds ``packages/<package>/`` (no
paths, ``packages``, ``.``) or lies inside it (its tests folder, one file, one node id). So
``make ci`` / ``make golden-update`` check every package, a CI shard or a one-file run checks
only the packages it touches, and another package's goldens are never flagged or deleted.
``-k``/``-m`` do not matter: a deleted module can be selected by nothing. The check runs once
per session, in the xdist controller (or the only process), never in the workers.

Honours syrupy's options: ``--snapshot-disable-unused`` (no check), ``--snapshot-warn-unused``
(report, do not fail), ``--snapshot-update --snapshot-no-cleanup`` (report, do not delete).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from testkit.golden import GOLDEN_DIRNAME

PACKAGES_DIRNAME = "packages"


@dataclass(frozen=True)
class Orphan:
    """One ``golden/<package>/<module>/`` folder without its test module."""

    folder: Path
    files: int


def _arg_path(arg: str, invocation_dir: Path) -> Path:
    """A pytest argument (``path``, ``path::Class::test``) as an absolute path."""
    return (invocation_dir / arg.split("::", 1)[0]).resolve()


def packages_in_scope(root: Path, args: list[str], invocation_dir: Path) -> set[str]:
    """Package folder names the run's paths cover (whole package or any part of it)."""
    packages_dir = (root / PACKAGES_DIRNAME).resolve()
    golden_dir = root / GOLDEN_DIRNAME
    known = {p.name for p in packages_dir.iterdir() if p.is_dir()} if packages_dir.is_dir() else set()
    known |= {p.name for p in golden_dir.iterdir() if p.is_dir()} if golden_dir.is_dir() else set()
    scope: set[str] = set()
    for arg in args:
        path = _arg_path(arg, invocation_dir)
        if path == packages_dir or path in packages_dir.parents:
            return known
        if packages_dir in path.parents:
            scope.add(path.relative_to(packages_dir).parts[0])
    return scope & known


def find_orphans(root: Path, packages: set[str]) -> list[Orphan]:
    """``golden/<package>/<module>/`` folders with no ``<module>.py`` under ``packages/<package>/``."""
    orphans = []
    for package in sorted(packages):
        golden = root / GOLDEN_DIRNAME / package
        if not golden.is_dir():
            continue
        source = root / PACKAGES_DIRNAME / package
        modules = {p.stem for p in source.rglob("*.py")} if source.is_dir() else set()
        for folder in sorted(p for p in golden.iterdir() if p.is_dir() and p.name not in modules):
            orphans.append(Orphan(folder, sum(1 for f in folder.rglob("*") if f.is_file())))
    return orphans


class GoldenOrphans:
    """The pytest plugin: checks (or deletes) orphaned golden folders at the end of the session."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.orphans: list[Orphan] = []
        self.deleted = False
        self.failing = False

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        config = session.config
        if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED):
            return  # interrupted or broken: the run says nothing about which goldens are used
        if config.getoption("disable_unused_snapshots", False):
            return
        scope = packages_in_scope(self.root, list(config.args), config.invocation_params.dir)
        found = find_orphans(self.root, scope)  # after syrupy (trylast): its deletions may have emptied some
        if config.getoption("update_snapshots", False):
            if config.getoption("no_cleanup", False):
                self.orphans = [o for o in found if o.files]
            else:
                self.orphans = found
                for orphan in self.orphans:
                    shutil.rmtree(orphan.folder)
                    if not any(orphan.folder.parent.iterdir()):
                        orphan.folder.parent.rmdir()
                self.deleted = True
            return
        self.orphans = [o for o in found if o.files]  # an empty folder is not in git: nothing to review
        if not self.orphans or config.getoption("warn_unused_snapshots", False):
            return
        self.failing = True
        if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.orphans:
            return
        verb = "deleted" if self.deleted else "orphaned"
        terminalreporter.write_sep("=", f"golden folders without a test module ({len(self.orphans)} {verb})")
        for orphan in self.orphans:
            where = orphan.folder.relative_to(self.root).as_posix()
            module = f"{PACKAGES_DIRNAME}/{orphan.folder.parent.name}/**/{orphan.folder.name}.py"
            line = f"{where}/: no {module}" if self.deleted else f"{where}/ ({orphan.files} file(s)): no {module}"
            terminalreporter.write_line(line, red=self.failing, yellow=not self.failing and not self.deleted)
        if not self.deleted:
            terminalreporter.write_line("delete them with `make golden-update` (nox -s snapshots -- --snapshot-update)")
