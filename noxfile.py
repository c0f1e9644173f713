"""evaljig sessions — the table of contents of everything the project runs.

Every session syncs the workspace from the committed ``uv.lock`` (``--locked``) into its
own venv. pytest's exit code 5 (nothing collected) never fails a session.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import nox

nox.needs_version = ">=2025.5.1"
nox.options.default_venv_backend = "uv"
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = ["lint", "typecheck", "tests", "package", "report"]

ROOT = Path(__file__).parent
PYTHON = "3.11"
PACKAGES = sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists())
#: Tests may talk to servers on this machine only.
LOOPBACK_ONLY = "--allow-hosts=127.0.0.1,::1,localhost"
PYTEST_OK = [0, 5]
OFFLINE_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def _run_id() -> str:
    """EVALJIG_RUN, else the GitHub run and attempt, else a UTC timestamp (as ``evaljig_report.run_id``)."""
    if os.environ.get("EVALJIG_RUN"):
        return os.environ["EVALJIG_RUN"]
    if os.environ.get("GITHUB_RUN_ID"):
        return f"{os.environ['GITHUB_RUN_ID']}-{os.environ.get('GITHUB_RUN_ATTEMPT', '1')}"
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


#: Every session of one nox invocation reports into reports/<RUN>/<session>/.
RUN = _run_id()
REPORTS = ROOT / "reports"


def report_env(session: nox.Session) -> dict[str, str]:
    """Per-case reports for every test of the session (see the README's reporter section)."""
    return {**OFFLINE_ENV, "EVALJIG_RUN": RUN, "EVALJIG_SESSION": session.name, "EVALJIG_ALL_TESTS": "1"}


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
        env=report_env(session), success_codes=PYTEST_OK,
    )  # fmt: skip


@nox.session(python=PYTHON)
def snapshots(session: nox.Session) -> None:
    """The golden tests alone; ``-- --snapshot-update`` rewrites golden/."""
    sync(session, "dev")
    session.run(
        "pytest", "-m", "not lighteval", LOOPBACK_ONLY, *session.posargs,
        env=report_env(session), success_codes=PYTEST_OK,
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


@nox.session(python=PYTHON, reuse_venv=False)
def package(session: nox.Session) -> None:
    """Build every wheel, check what ships, install them in a fresh venv, test the installed corpus."""
    tmp = Path(session.create_tmp())
    dist, constraints = tmp / "dist", tmp / "constraints.txt"
    session.run("uv", "build", "--all-packages", "--wheel", "--clear", "--out-dir", str(dist), external=True)
    session.run("python", "ci/check_wheels.py", str(dist))
    session.run(
        "uv", "export", "--locked", "--all-packages", "--all-groups", "--no-emit-workspace", "--no-hashes",
        "--quiet", "--output-file", str(constraints), external=True,
    )  # fmt: skip
    test_deps = ["pytest", "pytest-xdist", "pytest-socket", "syrupy", "pyyaml"]
    session.install("-c", str(constraints), *map(str, sorted(dist.glob("*.whl"))), *test_deps)
    venv = session.virtualenv.location
    session.run(
        "python", "-I", "-c",
        "import sys, evaljig_fixtures as m; from pathlib import Path; p = Path(m.__file__).resolve();"
        " assert p.is_relative_to(Path(sys.prefix).resolve()), f'{p} is not the installed wheel'; print('imports', p)",
    )  # fmt: skip
    session.run("evaljig-fixtures", "validate")
    session.run(
        "pytest", "packages/fixture-builder", "-p", "no:cacheprovider", "--import-mode=importlib", LOOPBACK_ONLY,
        "-n", workers(), *session.posargs,
        env={**report_env(session), "EVALJIG_FIXTURES_INSTALLED_PREFIX": venv}, success_codes=PYTEST_OK,
    )  # fmt: skip


@nox.session(python=PYTHON)
def report(session: nox.Session) -> None:
    """Merge every session's and worker's reports of this run into reports/<run>/merged/."""
    sync(session)
    run_dir = REPORTS / RUN
    where = [str(run_dir)] if run_dir.is_dir() else ["--latest", str(REPORTS)]
    session.run("evaljig-report", "merge", *where)
