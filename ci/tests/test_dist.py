"""``make dist``'s output installs like any Python tool: plain pip into a fresh venv, and a uv project.

The wheels and sdists come from ``EVALJIG_DIST`` when set (a ``make dist`` folder), else they are
built here exactly as ``nox -s dist`` builds them. Only ``evaljig`` without extras is installed: the
``[lighteval]`` extra (torch, ~2 GB) is installed by ``nox -s adoption`` in ``make ci``, with pip and with uv,
as a team installs it (docs/development.md#dist).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from ci import check_wheels

ROOT = Path(__file__).resolve().parents[2]
VERSION = (ROOT / "VERSION").read_text(encoding="utf-8").strip()
MEMBERS = ("evaljig-common", "evaljig-corpus", "evaljig-gateway", "evaljig-config", "evaljig-fixtures")
MEMBERS += ("evaljig-cases", "evaljig-report", "evaljig-review")
pytestmark = pytest.mark.dist


def _uv() -> str:
    found = shutil.which("uv") or str(ROOT / ".tools" / "bin" / "uv")
    assert Path(found).is_file(), "uv is needed (make setup bootstraps it into .tools/bin)"
    return found


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("EVALJIG_DIST")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("dist")
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    for target in (["--all-packages"], [str(ROOT / "packages" / "evaljig")]):
        subprocess.run([_uv(), "build", *target, "--out-dir", str(out), "--quiet"], cwd=ROOT, check=True, env=env)
    return out


def _version_lines() -> list[str]:
    return [f"evaljig {VERSION}", *(f"{name} {VERSION}" for name in MEMBERS)]


def test_every_built_wheel_and_sdist_passes_the_checks(dist: Path) -> None:
    assert check_wheels.main(dist, sdist=True) == 0


def test_plain_pip_installs_evaljig_into_a_fresh_venv(dist: Path, tmp_path: Path) -> None:
    venv.create(tmp_path / "venv", with_pip=True)
    bin_dir = tmp_path / "venv" / "bin"
    pip = [str(bin_dir / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "install", "--no-compile", "--find-links", str(dist), "evaljig"], check=True)
    done = subprocess.run([str(bin_dir / "evaljig"), "version"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert set(_version_lines()) <= set(done.stdout.splitlines()), done.stdout
    check = subprocess.run([*pip, "check"], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_uv_project_depends_on_evaljig(dist: Path, tmp_path: Path) -> None:
    project = tmp_path / "team-pipeline"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "team-pipeline"\nversion = "0.0.0"\nrequires-python = ">=3.11"\ndependencies = []\n\n'
        f"[tool.uv]\nfind-links = [{str(dist)!r}]\n",
        encoding="utf-8",
    )
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_PYTHON": sys.executable}
    env.pop("VIRTUAL_ENV", None)
    env.pop("UV_PROJECT_ENVIRONMENT", None)
    subprocess.run([_uv(), "add", "--quiet", "evaljig"], cwd=project, check=True, env=env)
    run = [_uv(), "run", "--quiet", "evaljig", "version"]
    done = subprocess.run(run, cwd=project, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert set(_version_lines()) <= set(done.stdout.splitlines()), done.stdout
    assert f'"evaljig>={VERSION}"' in (project / "pyproject.toml").read_text(encoding="utf-8")
