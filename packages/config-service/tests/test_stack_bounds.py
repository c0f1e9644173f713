"""The lighteval stack's bounds: one table, carried by every requirement list, enforced by the check.

A litellm release (1.109) removed the disk cache lighteval 0.13 turns on, and the documented
``evaljig[lighteval]`` install floated onto it. These tests keep the bounds in the table, the
extra, the requirements file, the config service's own dependency, the tested pins and the docs
in step, and show the check's line for an out-of-range version: the package, the installed
version, the tested range, why, and the exact command.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

from evaljig_config import (
    LIGHTEVAL_STACK,
    RESOLVER_HINTS,
    STACK_BOUNDS,
    StackBound,
    VersionMismatch,
    check_stack_versions,
)

ROOT = Path(__file__).resolve().parents[3]
#: Every package whose breaking release reaches a LEV run (issue: "Installs as users install").
REACHES_A_LEV_RUN = {"lighteval", "litellm", "openai", "huggingface_hub", "datasets", "transformers", "torch"}


def bound(name: str) -> StackBound:
    return next(b for b in STACK_BOUNDS if b.name == name)


def test_every_package_that_reaches_a_lev_run_has_a_bounded_range_and_a_reason() -> None:
    assert {b.name for b in STACK_BOUNDS} >= REACHES_A_LEV_RUN
    for item in STACK_BOUNDS:
        requirement = Requirement(item.requirement)
        operators = {spec.operator for spec in requirement.specifier}
        assert operators & {"<", "=="}, f"{item.name}: no upper bound"
        assert item.why.strip(), f"{item.name}: no reason"
    assert tuple(b.requirement for b in STACK_BOUNDS) == LIGHTEVAL_STACK


def test_the_litellm_range_excludes_the_releases_without_the_disk_cache() -> None:
    litellm = bound("litellm")
    assert litellm.admits("1.106.2")  # the LEV matrix's pin
    assert litellm.admits("1.108.14")  # the newest release with litellm.caching.disk_cache (measured)
    assert not litellm.admits("1.109.0")
    assert not litellm.admits("1.110.2")
    assert bound("torch").admits("2.13.0+cpu")  # a CPU wheel's local label is the same release
    assert not bound("xxhash").admits("not-a-version")


def test_the_config_services_own_litellm_dependency_is_the_tested_range() -> None:
    project = tomllib.loads((ROOT / "packages" / "config-service" / "pyproject.toml").read_text(encoding="utf-8"))
    [litellm] = [Requirement(r) for r in project["project"]["dependencies"] if r.startswith("litellm")]
    assert str(litellm.specifier) == str(Requirement(bound("litellm").requirement).specifier)


def test_every_pin_of_the_lev_matrix_constraints_is_inside_its_bound() -> None:
    pins = {}
    for line in (ROOT / "ci" / "lighteval-constraints.txt").read_text(encoding="utf-8").splitlines():
        if "==" in line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[re.sub(r"[-_.]+", "-", name.strip().lower())] = version.split(";")[0].strip()
    for item in STACK_BOUNDS + RESOLVER_HINTS:
        key = re.sub(r"[-_.]+", "-", item.name.lower())
        assert key in pins, f"{item.name} is bounded but not pinned in ci/lighteval-constraints.txt"
        assert item.admits(pins[key]), (
            f"ci/lighteval-constraints.txt pins {item.name}=={pins[key]}, outside {item.specifier}: "
            "run `make lighteval-constraints`"
        )


def test_docs_project_lists_each_bound_with_its_range_and_reason() -> None:
    text = (ROOT / "docs" / "project.md").read_text(encoding="utf-8")
    rows = {
        cells[0].strip("`"): (cells[1].strip("`"), cells[2])
        for cells in (
            [c.strip() for c in line.strip().strip("|").split("|")]
            for line in text.splitlines()
            if line.startswith("| `")
        )
        if len(cells) == 3
    }
    for item in STACK_BOUNDS + RESOLVER_HINTS:
        assert rows.get(item.name + item.extras) == (item.specifier, item.why), item.name


def test_a_version_outside_the_range_is_one_line_with_the_exact_fix() -> None:
    pytest_version = __import__("importlib.metadata").metadata.version("pytest")
    [mismatch] = check_stack_versions((StackBound("pytest", "<1", "a reason"), StackBound("json-nowhere", "<1", "x")))
    assert mismatch == VersionMismatch(StackBound("pytest", "<1", "a reason"), pytest_version)
    assert mismatch.line() == (
        f"pytest {pytest_version} is installed, but evaljig is tested with pytest<1 (a reason); "
        "fix: pip install 'pytest<1' (in a uv project: uv add 'pytest<1')"
    )
    assert check_stack_versions((StackBound("pytest", ">=1", "in range"),)) == []


def fake_distribution(site: Path, name: str, version: str) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")


def run_check(pythonpath: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    return subprocess.run(
        [sys.executable, "-m", "evaljig_config", "lighteval", "check"],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=300, check=False,
    )  # fmt: skip


def test_the_check_names_a_litellm_outside_the_range_and_the_command_that_fixes_it(tmp_path: Path) -> None:
    site, cwd = tmp_path / "site", tmp_path / "work"
    cwd.mkdir()
    fake_distribution(site, "litellm", "1.110.2")
    done = run_check(site, cwd)
    assert done.returncode == 1
    first = done.stderr.splitlines()[0]
    assert first == (
        "evaljig-config: lighteval stack check failed: litellm 1.110.2 is installed, but evaljig is tested with "
        f"litellm>=1.106.2,<1.109 ({bound('litellm').why}); "
        "fix: pip install 'litellm>=1.106.2,<1.109' (in a uv project: uv add 'litellm>=1.106.2,<1.109')"
    )
    assert "reinstall it or rebuild the stack" not in done.stderr
    assert "Traceback" not in done.stderr


def test_the_check_leaves_no_litellm_cache_in_the_working_directory(tmp_path: Path) -> None:
    """lighteval turns on litellm's disk cache at import, in the working directory."""
    site, cwd = tmp_path / "site", tmp_path / "work"
    cwd.mkdir()
    package = site / "lighteval"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("import os\nos.makedirs('.litellm_cache', exist_ok=True)\n")
    done = run_check(site, cwd)
    assert done.returncode == 1  # a stand-in lighteval has none of the modules a run reaches
    assert not (cwd / ".litellm_cache").exists(), done.stderr
    assert list(cwd.iterdir()) == []
