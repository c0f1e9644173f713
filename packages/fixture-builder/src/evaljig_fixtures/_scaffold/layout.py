"""Where ``evaljig init`` puts the scaffold: the team's tests folder and scripts folder, and what follows from them.

Everything is derived from two repository-relative folders, so the builder, the LEV tests, the
workflow, the ``.gitignore`` line and every hint ``init`` prints name the same places:

- ``tests_dir`` (``--tests-dir``, default ``backend/tests``): the LEV tests go in ``<tests_dir>/lighteval``;
  pytest runs from its parent (the *run folder*, ``backend``), where per-case reports land in ``reports/``;
- ``scripts_dir`` (``--scripts-dir``, default ``scripts/testing``): the builder ``build_lighteval_fixture.py``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from evaljig_fixtures._errors import EvaljigFixturesError

DEFAULT_TESTS_DIR = "backend/tests"
DEFAULT_SCRIPTS_DIR = "scripts/testing"
BUILD_SCRIPT_NAME = "build_lighteval_fixture.py"
#: A folder name in the scaffold's paths: safe in Python, YAML, shell and .gitignore without quoting.
_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$")


def folder(value: str, option: str) -> tuple[str, ...]:
    """A repository-relative folder as its parts; ``EvaljigFixturesError`` naming the option otherwise."""
    path = PurePosixPath(value)
    parts = tuple(p for p in path.parts if p != ".")
    if path.is_absolute() or "\\" in value or not parts or not all(_PART.match(p) for p in parts) or len(parts) > 8:
        raise EvaljigFixturesError(
            f"{option} {value!r}: must be a folder inside the repository, such as {DEFAULT_TESTS_DIR}: relative, "
            "'/'-separated names of letters, digits, '.', '_' and '-' (no '..')"
        )
    return parts


@dataclass(frozen=True)
class Layout:
    """The scaffold's places, as POSIX paths relative to the repository's root."""

    tests: tuple[str, ...] = tuple(DEFAULT_TESTS_DIR.split("/"))
    scripts: tuple[str, ...] = tuple(DEFAULT_SCRIPTS_DIR.split("/"))

    @classmethod
    def parse(cls, tests_dir: str, scripts_dir: str) -> Layout:
        layout = cls(folder(tests_dir, "--tests-dir"), folder(scripts_dir, "--scripts-dir"))
        if layout.scripts[: len(layout.lev_parts)] == layout.lev_parts:
            raise EvaljigFixturesError(
                f"--scripts-dir {scripts_dir!r}: must not lie inside the LEV tests folder {layout.lev}"
            )
        return layout

    @property
    def lev_parts(self) -> tuple[str, ...]:
        return (*self.tests, "lighteval")

    @property
    def lev(self) -> str:
        """The LEV tests' folder (``backend/tests/lighteval``)."""
        return "/".join(self.lev_parts)

    @property
    def fixtures(self) -> str:
        return f"{self.lev}/fixtures"

    @property
    def script(self) -> str:
        """The builder, from the root (``scripts/testing/build_lighteval_fixture.py``)."""
        return "/".join((*self.scripts, BUILD_SCRIPT_NAME))

    @property
    def run_parts(self) -> tuple[str, ...]:
        """The run folder: where pytest and the builder are run from (the tests folder's parent)."""
        return self.tests[:-1]

    @property
    def run_dir(self) -> str:
        """The run folder as a path (``backend``; ``.`` for the root)."""
        return "/".join(self.run_parts) or "."

    @property
    def run_path(self) -> str:
        """The run folder as a prefix (``backend/``; empty for the root)."""
        return "".join(f"{p}/" for p in self.run_parts)

    @property
    def script_from_run(self) -> str:
        """The builder as the run folder sees it (``../scripts/testing/build_lighteval_fixture.py``)."""
        return _relative(self.script, self.run_dir)

    @property
    def lev_from_run(self) -> str:
        """The LEV folder as the run folder sees it (``tests/lighteval``)."""
        return _relative(self.lev, self.run_dir)

    @property
    def reports_ignore(self) -> str:
        """The ``.gitignore`` line for the per-case reports (anchored: ``backend/reports/``, ``/reports/``)."""
        return f"{self.run_path}reports/" if self.run_parts else "/reports/"

    def in_run_dir(self, command: str) -> str:
        """``command`` as a user types it from the root: ``(cd backend && command)``, or just it."""
        return f"(cd {self.run_dir} && {command})" if self.run_parts else command


def _relative(path: str, start: str) -> str:
    return PurePosixPath(os.path.relpath(path, start)).as_posix()
