"""Each package declares what its code imports, and imports what it declares.

A module imported but not declared works here only because another package pulls it in (a team
installing that package alone gets an ImportError the day the other drops it); a dependency
declared but never imported is installed into every user's environment for nothing. Read from
the source (every ``import`` in ``src/``, lazy and optional ones included) against each
``pyproject.toml``; import names become distributions through this environment's metadata.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECTS = sorted(ROOT.glob("packages/*/pyproject.toml"))

#: Imported without being a dependency, on purpose: (distribution, imported) -> why.
IMPORTED_NOT_DECLARED = {
    ("evaljig-gateway", "pytest"): "only its pytest plugin module imports pytest, and only pytest loads that module",
    ("evaljig-review", "evaljig-fixtures"): "optional: without it a stale build script is a note (the review says so)",
    ("evaljig-fixtures", "pytest-xdist"): (
        "only load_with_modules_together imports it, when a conftest's pytest_xdist_make_scheduler hook (which only "
        "pytest-xdist calls) returns it"
    ),
}
#: Declared without being imported, on purpose: (distribution, declared) -> why.
DECLARED_NOT_IMPORTED = {
    ("evaljig-gateway", "httptools"): "uvicorn's fast HTTP parser, which the gateway names in uvicorn's config",
    ("evaljig-gateway", "uvloop"): "uvicorn's fast event loop, which its default loop='auto' picks when installed",
}


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[\s<>=!~;\[(]", requirement.strip(), maxsplit=1)[0]).lower()


def _imported(src: Path) -> dict[str, set[str]]:
    """Distribution -> the files importing it: every absolute import under ``src``, stdlib left out."""
    owners = packages_distributions()
    found: dict[str, set[str]] = {}
    for path in src.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.partition(".")[0]
                if top in sys.stdlib_module_names or top == "__future__":
                    continue
                for dist in owners.get(top, [top]):
                    found.setdefault(_name(dist), set()).add(path.relative_to(ROOT).as_posix())
    return found


@pytest.mark.parametrize("pyproject", PYPROJECTS, ids=lambda p: p.parent.name)
def test_a_package_declares_what_it_imports_and_imports_what_it_declares(pyproject: Path) -> None:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    if "dependencies" in project.get("dynamic", []):
        pytest.skip("its dependencies are generated (the meta-package pins every evaljig package)")
    name = _name(project["name"])
    declared = {_name(r) for r in project.get("dependencies", [])}
    extras = {_name(r) for reqs in project.get("optional-dependencies", {}).values() for r in reqs}
    imported = _imported(pyproject.parent / "src")

    undeclared = {
        dist: sorted(files)
        for dist, files in imported.items()
        if dist not in declared | extras | {name} and (name, dist) not in IMPORTED_NOT_DECLARED
    }
    unused = sorted(d for d in declared - set(imported) if (name, d) not in DECLARED_NOT_IMPORTED)
    where = pyproject.relative_to(ROOT)
    assert not undeclared, f"{where}: imported, not declared in [project].dependencies: {undeclared}"
    assert not unused, f"{where}: declared, never imported (remove it, or say why here): {unused}"


def test_every_exception_above_still_applies() -> None:
    """An exception whose reason went away is removed, not kept as a hole in the check."""
    by_name = {_name(tomllib.loads(p.read_text(encoding="utf-8"))["project"]["name"]): p for p in PYPROJECTS}
    for package, dist in IMPORTED_NOT_DECLARED:
        assert dist in _imported(by_name[package].parent / "src"), (package, dist)
    for package, dist in DECLARED_NOT_IMPORTED:
        project = tomllib.loads(by_name[package].read_text(encoding="utf-8"))["project"]
        assert dist in {_name(r) for r in project["dependencies"]}, (package, dist)
