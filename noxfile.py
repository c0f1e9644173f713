"""evaljig sessions — the table of contents of everything the project runs.

Every session syncs the workspace from the committed ``uv.lock`` (``--locked``) into its
own venv. pytest's exit code 5 (nothing collected) never fails a session.
"""

from __future__ import annotations

import os
from pathlib import Path

import nox

nox.needs_version = ">=2025.5.1"
nox.options.default_venv_backend = "uv"
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = ["lint", "typecheck", "tests"]

ROOT = Path(__file__).parent
PYTHON = "3.11"
PACKAGES = sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists())
#: Tests may talk to servers on this machine only.
LOOPBACK_ONLY = "--allow-hosts=127.0.0.1,::1,localhost"
PYTEST_OK = [0, 5]
OFFLINE_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def sync(session: nox.Session, *groups: str) -> None:
    """Install the whole workspace plus dependency ``groups`` exactly as locked."""
    args = ["uv", "sync", "--locked", "--all-packages", "--no-default-groups"]
    args += [f"--group={g}" for g in groups]
    session.run_install(*args, env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location})


def workers() -> str:
    return os.environ.get("EVALJIG_WORKERS", "auto")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Unit, snapshot and cassette-replay tests of every package (xdist, network blocked)."""
    sync(session, "dev")
    session.run(
        "pytest", "-n", workers(), LOOPBACK_ONLY, "-m", "not lighteval", *session.posargs,
        env=OFFLINE_ENV, success_codes=PYTEST_OK,
    )  # fmt: skip


@nox.session(python=PYTHON)
def snapshots(session: nox.Session) -> None:
    """The golden tests alone; ``-- --snapshot-update`` rewrites golden/."""
    sync(session, "dev")
    session.run(
        "pytest", "-m", "not lighteval", LOOPBACK_ONLY, *session.posargs,
        env=OFFLINE_ENV, success_codes=PYTEST_OK,
    )  # fmt: skip


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check."""
    sync(session, "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict over every package's src/."""
    sync(session, "dev", "lint")
    session.run("mypy")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks: print figures and ratios; nothing here asserts on time."""
    sync(session, "dev")
    for script in sorted(ROOT.glob("packages/*/benchmarks/bench_*.py")):
        session.run("python", str(script), *session.posargs)
