"""A team's own regen builders: named in its ``pyproject.toml`` or registered by entry point.

``evaljig-fixtures regen`` (run where the project's ``pyproject.toml`` is) looks, in order, at::

    [tool.evaljig]
    builders = ["fixtures_build:BUILDERS", "more.builders:dataset"]   # or a table: name = "module:attr"
    fixtures = "tests/lighteval/fixtures"                             # --out's default (else ./fixtures)

then at the entry point group ``evaljig.builders`` of the installed distributions. With neither
it refuses, naming the repository's own build script when it finds one (``evaljig init`` writes
``build_lighteval_fixture.py``; evaljig's own repository has one too, so no builder set ships
inside the package). Each reference names a ``Builder``, a sequence of them, or a
function taking no argument that returns either. Modules are imported with the project's folder
first on ``sys.path``, so a module beside ``pyproject.toml`` needs no install.
"""

from __future__ import annotations

import importlib
import sys
import tomllib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from evaljig_fixtures._errors import BuildError
from evaljig_fixtures._regen.builder import Builder

ENTRY_POINT_GROUP = "evaljig.builders"
PYPROJECT = "pyproject.toml"


@dataclass(frozen=True)
class ProjectBuilders:
    builders: tuple[Builder, ...]
    fixtures: Path | None
    """The fixtures folder the project names (``[tool.evaljig] fixtures``), absolute; None when unnamed."""
    origin: str


def as_builders(value: Any, where: str) -> tuple[Builder, ...]:
    """A ``Builder``, a sequence of them, or a no-argument function returning either, as a tuple."""
    if callable(value) and not isinstance(value, Builder):
        value = value()
    if isinstance(value, Builder):
        return (value,)
    if isinstance(value, Sequence) and not isinstance(value, str) and all(isinstance(b, Builder) for b in value):
        return tuple(value)
    raise BuildError(f"{where}: must be a Builder, a sequence of Builders or a function returning one, got {value!r}")


@contextmanager
def _importable_from(folder: Path) -> Iterator[None]:
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        sys.path.remove(str(folder))


def load_reference(reference: str, where: str) -> tuple[Builder, ...]:
    """``module:attr`` (``attr`` may be dotted) resolved to builders; ``BuildError`` naming ``where`` otherwise."""
    module_name, sep, attr = reference.partition(":")
    if not sep or not module_name or not attr:
        raise BuildError(f"{where}: {reference!r} is not 'module:attribute'")
    try:
        value: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise BuildError(f"{where}: cannot import {module_name}: {exc}") from exc
    for part in attr.split("."):
        if not hasattr(value, part):
            raise BuildError(f"{where}: {module_name} has no attribute {attr}")
        value = getattr(value, part)
    return as_builders(value, where)


def _from_pyproject(path: Path) -> ProjectBuilders | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BuildError(f"{path}: cannot read: {exc}") from exc
    table = data.get("tool", {}).get("evaljig", {})
    if not isinstance(table, dict) or "builders" not in table:
        return None
    refs = table["builders"]
    items = list(refs.items()) if isinstance(refs, dict) else list(enumerate(refs)) if isinstance(refs, list) else None
    if not items or not all(isinstance(ref, str) for _, ref in items):
        raise BuildError(f"{path}: [tool.evaljig] builders: must be a non-empty list (or table) of 'module:attr'")
    fixtures = table.get("fixtures")
    if fixtures is not None and not isinstance(fixtures, str):
        raise BuildError(f"{path}: [tool.evaljig] fixtures: must be a path (a string)")
    builders: list[Builder] = []
    with _importable_from(path.parent):
        for key, ref in items:
            builders += load_reference(ref, f"{path}: [tool.evaljig] builders[{key!r}]")
    folder = (path.parent / fixtures).resolve() if fixtures else None
    return ProjectBuilders(tuple(builders), folder, f"{path} [tool.evaljig]")


def _from_entry_points() -> ProjectBuilders | None:
    found = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: (ep.name, ep.value))
    if not found:
        return None
    builders: list[Builder] = []
    for ep in found:
        where = f"entry point {ep.name} = {ep.value!r} (group {ENTRY_POINT_GROUP})"
        try:
            value = ep.load()
        except ImportError as exc:
            raise BuildError(f"{where}: cannot import: {exc}") from exc
        builders += as_builders(value, where)
    return ProjectBuilders(tuple(builders), None, f"entry points {ENTRY_POINT_GROUP}")


def project_builders(folder: Path) -> ProjectBuilders | None:
    """The builders the project in ``folder`` registers (pyproject first, then entry points), or None."""
    pyproject = folder / PYPROJECT
    found = _from_pyproject(pyproject) if pyproject.is_file() else None
    return found if found is not None else _from_entry_points()


SCAFFOLD_SCRIPT = "build_lighteval_fixture.py"
_SKIPPED = frozenset({"node_modules", "venv", "site-packages", "__pycache__", "dist", "build", "wheels"})
_MAX_DEPTH, _MAX_FOLDERS = 5, 2000


def find_build_scripts(folder: Path) -> list[str]:
    """The scaffold's build scripts below ``folder`` (relative, shallowest first), found by a bounded walk."""
    found: list[str] = []
    queue = [(folder, 0)]
    visited = 0
    while queue and visited < _MAX_FOLDERS:
        current, depth = queue.pop(0)
        visited += 1
        try:
            entries = sorted(current.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.name == SCAFFOLD_SCRIPT and entry.is_file():
                found.append(entry.relative_to(folder).as_posix())
            elif (
                depth < _MAX_DEPTH and entry.is_dir() and not entry.is_symlink()
                and not entry.name.startswith(".") and entry.name not in _SKIPPED
            ):  # fmt: skip
                queue.append((entry, depth + 1))
    return found


def not_here(folder: Path) -> str:
    """Why ``evaljig-fixtures regen`` does nothing in ``folder``, and the command that rebuilds its fixtures."""
    scripts = find_build_scripts(folder)
    where = (
        f"{folder} registers no builders ([tool.evaljig] builders in {PYPROJECT}, or entry points "
        f"{ENTRY_POINT_GROUP}), and no fixtures ship inside evaljig-fixtures"
    )
    if scripts:
        return f"{where}; fix: run this repository's build script: python {scripts[0]}"
    return (
        f"{where}; fix: run your fixtures' build script (`evaljig init` writes "
        f"scripts/testing/{SCAFFOLD_SCRIPT}), or name your builders in {PYPROJECT} [tool.evaljig] builders"
    )
