"""Golden module folders whose test module is gone: they fail the run, ``--snapshot-update`` deletes them.

syrupy (7.0) scans only the golden folders of test modules it collected, and only with the
golden formats some test of the session used; its ``--snapshot-update`` deletes files and
leaves their folders. So the goldens of a deleted test module stayed forever, and emptied
folders piled up. A folder is an orphan when the test module it belongs to does not exist — a
fact of the file system, not of which tests ran:

- layout ``path``: ``golden/evals/tests/test_x/`` belongs to ``evals/tests/test_x.py``;
- layout ``packages``: ``golden/<pkg>/test_x/`` belongs to any ``test_x.py`` under ``packages/<pkg>/``.

When it applies: to what the run was pointed at (the command line, else ``testpaths``). A
folder is in scope when its test module lies inside one of the run's paths (layout ``path``),
or its package is covered by them (layout ``packages``: a path holding ``packages/<pkg>/`` or
inside it). ``-k``/``-m`` do not matter: a deleted module can be selected by nothing. The check
runs once per session, in the xdist controller (or the only process), never in the workers.

Honours syrupy's options: ``--snapshot-disable-unused`` (no check), ``--snapshot-warn-unused``
(report, do not fail), ``--snapshot-update --snapshot-no-cleanup`` (report, do not delete).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evaljig_review._golden import PACKAGES_DIRNAME, GoldenSettings


@dataclass(frozen=True)
class Orphan:
    """One golden module folder without its test module; ``module``: what it would need, for the message."""

    folder: Path
    files: int
    module: str


def _arg_path(arg: str, invocation_dir: Path) -> Path:
    """A pytest argument (``path``, ``path::Class::test``) as an absolute path."""
    return (invocation_dir / arg.split("::", 1)[0]).resolve()


def _count(folder: Path) -> int:
    return sum(1 for f in folder.rglob("*") if f.is_file())


def packages_in_scope(settings: GoldenSettings, args: list[str], invocation_dir: Path) -> set[str]:
    """Package folder names the run's paths cover (whole package or any part of it)."""
    packages_dir = (settings.root / PACKAGES_DIRNAME).resolve()
    known = {p.name for p in packages_dir.iterdir() if p.is_dir()} if packages_dir.is_dir() else set()
    known |= {p.name for p in settings.golden.iterdir() if p.is_dir()} if settings.golden.is_dir() else set()
    scope: set[str] = set()
    for arg in args:
        path = _arg_path(arg, invocation_dir)
        if path == packages_dir or path in packages_dir.parents:
            return known
        if packages_dir in path.parents:
            scope.add(path.relative_to(packages_dir).parts[0])
    return scope & known


def _package_orphans(settings: GoldenSettings, packages: set[str]) -> list[Orphan]:
    """``golden/<package>/<module>/`` folders with no ``<module>.py`` under ``packages/<package>/``."""
    orphans = []
    for package in sorted(packages):
        golden = settings.golden / package
        if not golden.is_dir():
            continue
        source = settings.root / PACKAGES_DIRNAME / package
        modules = {p.stem for p in source.rglob("*.py")} if source.is_dir() else set()
        for folder in sorted(p for p in golden.iterdir() if p.is_dir() and p.name not in modules):
            orphans.append(Orphan(folder, _count(folder), f"{PACKAGES_DIRNAME}/{package}/**/{folder.name}.py"))
    return orphans


def _module_folders(golden: Path) -> list[Path]:
    """Folders that hold goldens directly, or hold nothing at all (emptied by syrupy)."""
    found = []
    for folder in sorted(p for p in golden.rglob("*") if p.is_dir()):
        children = list(folder.iterdir())
        if any(c.is_file() for c in children) or not children:
            found.append(folder)
    return found


def _path_orphans(settings: GoldenSettings, roots: list[Path]) -> list[Orphan]:
    """Golden module folders (layout ``path``) whose ``<folder>.py`` is missing, within the run's paths."""
    if not settings.golden.is_dir():
        return []
    root = settings.root.resolve()
    orphans = []
    for folder in _module_folders(settings.golden):
        relative = folder.relative_to(settings.golden)
        module = root.joinpath(*relative.parts).with_suffix(".py")
        if module.is_file():
            continue
        if not any(module == r or r in module.parents for r in roots):
            continue
        orphans.append(Orphan(folder, _count(folder), module.relative_to(root).as_posix()))
    return orphans


def find_orphans(settings: GoldenSettings, args: list[str], invocation_dir: Path) -> list[Orphan]:
    """The orphaned golden module folders in the scope of a run with these paths."""
    if settings.layout == "packages":
        return _package_orphans(settings, packages_in_scope(settings, args, invocation_dir))
    return _path_orphans(settings, [_arg_path(a, invocation_dir) for a in args])


def _remove_empty_parents(folder: Path, stop: Path) -> None:
    parent = folder.parent
    while parent != stop and stop in parent.parents and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent


class GoldenOrphans:
    """The pytest plugin: checks (or deletes) orphaned golden folders at the end of the session."""

    def __init__(self, settings: GoldenSettings) -> None:
        self.settings = settings
        self.orphans: list[Orphan] = []
        self.deleted = False
        self.failing = False

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        config = session.config
        if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED):
            return  # interrupted or broken: the run says nothing about which goldens are used
        if config.getoption("disable_unused_snapshots", False) or not self.settings.golden.is_dir():
            return
        # after syrupy (trylast): its deletions may have emptied some
        found = find_orphans(self.settings, list(config.args), config.invocation_params.dir)
        if config.getoption("update_snapshots", False):
            if config.getoption("no_cleanup", False):
                self.orphans = [o for o in found if o.files]
            else:
                self.orphans = found
                for orphan in self.orphans:
                    shutil.rmtree(orphan.folder)
                    _remove_empty_parents(orphan.folder, self.settings.golden)
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
        root = self.settings.root.resolve()
        for orphan in self.orphans:
            folder = orphan.folder.resolve()
            where = folder.relative_to(root).as_posix() if root in folder.parents else folder.as_posix()
            count = "" if self.deleted else f" ({orphan.files} file(s))"
            line = f"{where}/{count}: no {orphan.module}"
            terminalreporter.write_line(line, red=self.failing, yellow=not self.failing and not self.deleted)
        if not self.deleted:
            terminalreporter.write_line(f"delete them with `{self.settings.update_command}`")
