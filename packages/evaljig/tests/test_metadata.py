"""The packaging contract, read from the sources: one version, one license, complete metadata, and a
meta-package whose lighteval extra is evaljig_config's stack and which never enters uv.lock."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

from evaljig import MEMBERS
from evaljig_config import LIGHTEVAL_EXTRA

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = sorted(p.parent for p in (ROOT / "packages").glob("*/pyproject.toml"))
META = ROOT / "packages" / "evaljig"
ROOT_CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def config(package: Path) -> dict[str, Any]:
    return tomllib.loads((package / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_lighteval_extra_is_the_lighteval_stack_and_the_resolver_hints() -> None:
    extra = config(META)["project"]["optional-dependencies"]["lighteval"]
    assert sorted(map(str, map(Requirement, extra))) == sorted(map(str, map(Requirement, LIGHTEVAL_EXTRA)))


def test_the_meta_package_pins_every_workspace_package() -> None:
    names = {config(p)["project"]["name"] for p in PACKAGES if p != META}
    hook = config(META)["tool"]["hatch"]["metadata"]["hooks"]["custom"]["members"]
    assert sorted(hook) == sorted(MEMBERS) == sorted(names)
    assert "dependencies" in config(META)["project"]["dynamic"]


def test_the_meta_package_stays_out_of_the_workspace_and_its_lock() -> None:
    assert ROOT_CONFIG["tool"]["uv"]["workspace"]["exclude"] == ["packages/evaljig"]
    lock = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))
    locked = {p["name"] for p in lock["package"]}
    assert not locked & {"evaljig", "torch", "lighteval"}, "the lighteval stack must stay out of uv.lock"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_metadata_is_complete(package: Path) -> None:
    project = config(package)["project"]
    assert "version" not in project
    assert "version" in project["dynamic"]
    assert config(package)["tool"]["hatch"]["version"]["path"] == "../../VERSION"
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    assert (package / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    pythons = [c for c in ROOT_CONFIG["project"]["classifiers"] if "Python ::" in c]
    assert set(pythons) <= set(project["classifiers"])
    plugin = "pytest11" in project.get("entry-points", {}) or package == META
    assert ("Framework :: Pytest" in project["classifiers"]) == plugin
    assert set(project["urls"]) == {"Homepage", "Documentation", "Source", "Issues"}
    assert all(url.startswith("https://github.com/evaljig/evaljig") for url in project["urls"].values())
    assert project["urls"]["Source"].endswith(f"/packages/{package.name}")


def test_one_version() -> None:
    version = (ROOT / "VERSION").read_text(encoding="utf-8")
    assert version.strip().count(".") == 2
    assert version == version.strip() + "\n"
