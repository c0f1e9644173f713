"""The release workflow does what docs/development.md says: on a v* tag, make dist, PyPI by trusted
publishing from the ``pypi`` environment, and the gateway image to ghcr.io from the Dockerfile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))


def steps(job: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = WORKFLOW["jobs"][job]["steps"]
    return found


def test_a_v_tag_triggers_it() -> None:
    assert WORKFLOW[True] == {"push": {"tags": ["v*"]}}  # YAML 1.1 reads the key `on` as true


def test_dist_is_built_by_make_dist_and_installed() -> None:
    runs = [s.get("run", "") for s in steps("dist")]
    assert "make dist" in runs
    assert any("pip install --find-links dist evaljig" in r and "pip check" in r for r in runs)
    assert any("$(cat VERSION)" in r for r in runs)


def test_pypi_by_trusted_publishing() -> None:
    job = WORKFLOW["jobs"]["pypi"]
    assert job["permissions"] == {"id-token": "write"}
    assert job["environment"]["name"] == "pypi"
    assert any(s.get("uses", "").startswith("pypa/gh-action-pypi-publish@") for s in job["steps"])
    assert not any("password" in s.get("with", {}) for s in job["steps"])


def test_the_gateway_image_goes_to_ghcr() -> None:
    (build,) = [s for s in steps("image") if s.get("uses", "").startswith("docker/build-push-action@")]
    assert (ROOT / build["with"]["file"]).is_file()
    assert build["with"]["push"] is True
    assert all(tag.startswith("ghcr.io/") for tag in build["with"]["tags"].splitlines())
    assert WORKFLOW["jobs"]["image"]["permissions"]["packages"] == "write"
