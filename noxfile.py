"""evaljig sessions — the table of contents of everything the project runs.

``tests``, ``snapshots``, ``lint``, ``typecheck``, ``bench`` and ``report`` sync the workspace
from the committed ``uv.lock`` (``--locked``) into their own venv; ``package`` installs the
built wheels, and ``lighteval`` and ``regen`` share the lighteval stack venv (ci/lighteval_stack.py),
both constrained by that lock. The ``test`` dependency group in pyproject.toml is what runs the
tests next to the wheels and in the stack. pytest's exit code 5 (nothing collected) never fails
a session.
"""

from __future__ import annotations

import functools
import os
import sys
import tomllib
from pathlib import Path

import nox
from packaging.specifiers import SpecifierSet

# nox's venv has neither the noxfile's folder on sys.path nor the workspace installed; evaljig_common
# is stdlib only, so its source folder is importable as is (one run-id and offline-env helper for all)
sys.path.insert(0, str(Path(__file__).parent / "packages" / "common" / "src"))
sys.path.insert(0, str(Path(__file__).parent))
from ci import lighteval_stack as stack
from evaljig_common import OFFLINE_ENV, claim_run, explicit_run_id

nox.needs_version = ">=2025.5.1"
nox.options.default_venv_backend = "uv"
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True

ROOT = Path(__file__).parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: Installed next to the built wheels and into the lighteval stack.
TEST_REQUIREMENTS = nox.project.dependency_groups(PYPROJECT, "test")
REPORTS = ROOT / "reports"
#: Tests may talk to servers on this machine only (TCP on loopback).
LOOPBACK_ONLY = ["--allow-hosts=127.0.0.1,::1,localhost"]
PYTEST_OK = [0, 5]


def supported_pythons() -> list[str]:
    """Every ``3.X`` the root ``requires-python`` admits: the tests session's matrix."""
    spec = SpecifierSet(PYPROJECT["project"]["requires-python"])
    return [f"3.{minor}" for minor in range(8, 30) if spec.contains(f"3.{minor}.0")]


PYTHONS = supported_pythons()
#: The default session Python (``make ci``, the lighteval stack); the oldest supported.
PYTHON = PYTHONS[0]
nox.options.sessions = ["lint", "typecheck", f"tests-{PYTHON}", "package", "lighteval", "report"]
stack.drop_stale_session_dirs(ROOT / ".nox")


@functools.cache
def run() -> str:
    """This nox invocation's run: every session reports into reports/<run>/<session>/.

    Claimed on first use, so ``nox -l`` or a lone ``nox -s report`` leave no empty run folder.
    """
    return claim_run(REPORTS)


def report_env(session: nox.Session) -> dict[str, str]:
    """Offline, and per-case reports for every test of the session (see docs/reporter.md)."""
    return {**OFFLINE_ENV, "EVALJIG_RUN": run(), "EVALJIG_SESSION": session.name, "EVALJIG_ALL_TESTS": "1"}


def sync(session: nox.Session, *groups: str) -> None:
    """Install the whole workspace plus dependency ``groups`` exactly as locked."""
    args = ["uv", "sync", "--locked", "--all-packages", "--no-default-groups"]
    args += [f"--group={g}" for g in groups]
    session.run_install(*args, env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location})


def workers() -> str:
    """xdist's ``-n``: ``EVALJIG_WORKERS``, else one worker per CPU."""
    return os.environ.get("EVALJIG_WORKERS", "auto")


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """Every test in pyproject's testpaths but the LEV matrix, under xdist, network limited to loopback.

    One session per supported Python (``tests-3.11`` ...); ``make ci`` runs the default one,
    ``make matrix`` all of them.
    """
    sync(session, "dev")
    session.run(
        "pytest", "-n", workers(), *LOOPBACK_ONLY, "-m", "not lighteval", *session.posargs,
        env=report_env(session), success_codes=PYTEST_OK,
    )  # fmt: skip


@nox.session(python=PYTHON)
def snapshots(session: nox.Session) -> None:
    """Every test but the LEV matrix in one process (no xdist), so syrupy sees all of golden/.

    ``-- --snapshot-update`` rewrites golden/ (``make golden-update``).
    """
    sync(session, "dev")
    session.run(
        "pytest", "-m", "not lighteval", *LOOPBACK_ONLY, *session.posargs,
        env=report_env(session), success_codes=PYTEST_OK,
    )  # fmt: skip


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff, ruff format --check, the package layering (lint-imports), actionlint, mkdocs build --strict."""
    sync(session, "lint")
    session.run("ruff", "check", ".")
    session.run("lint-imports")
    session.run("ruff", "format", "--check", ".")
    session.run("actionlint", *sorted(map(str, ROOT.glob(".github/workflows/*.y*ml"))))
    session.run("mkdocs", "build", "--strict", "--site-dir", str(Path(session.create_tmp()) / "site"))


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy (strict, as configured in pyproject.toml) over every package's src/."""
    sync(session, "dev", "lint")
    session.run("mypy")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Run every packages/*/benchmarks/bench_*.py: they print figures and ratios and assert nothing on time."""
    sync(session, "dev")
    for script in sorted(ROOT.glob("packages/*/benchmarks/bench_*.py")):
        session.run("python", str(script), *session.posargs)


@nox.session(python=PYTHON, reuse_venv=False)
def package(session: nox.Session) -> None:
    """Build every wheel and check what ships, install them in a fresh venv, test the installed corpus.

    The fixture builder's CLI validates the corpus and its tests run against the installed wheel.
    """
    tmp = Path(session.create_tmp())
    dist, constraints = tmp / "dist", tmp / "constraints.txt"
    session.run("uv", "build", "--all-packages", "--wheel", "--clear", "--out-dir", str(dist), external=True)
    session.run("python", "ci/check_wheels.py", str(dist))
    session.run(
        "uv", "export", "--locked", "--all-packages", "--all-groups", "--no-emit-workspace", "--no-hashes",
        "--quiet", "--output-file", str(constraints), external=True,
    )  # fmt: skip
    session.install("-c", str(constraints), *map(str, sorted(dist.glob("*.whl"))), *TEST_REQUIREMENTS)
    session.run(
        "python", "-I", "-c",
        "import sys, evaljig_corpus as m; from pathlib import Path; p = Path(m.__file__).resolve();"
        " assert p.is_relative_to(Path(sys.prefix).resolve()), f'{p} is not the installed wheel'; print('imports', p)",
    )  # fmt: skip
    session.run("evaljig-corpus", "validate")
    session.run(
        "pytest", "packages/capability-corpus", "packages/fixture-builder", "-p", "no:cacheprovider",
        "--import-mode=importlib", *LOOPBACK_ONLY, "-n", workers(), *session.posargs,
        env={**report_env(session), "EVALJIG_CORPUS_INSTALLED_PREFIX": session.virtualenv.location},
        success_codes=PYTEST_OK,
    )  # fmt: skip


@nox.session(python=PYTHON)
def report(session: nox.Session) -> None:
    """Merge this run's reports (every session's and worker's) into reports/<run>/merged/, else the newest run's."""
    sync(session)
    ours = run.cache_info().currsize > 0 or explicit_run_id() is not None  # sessions of this run wrote
    run_dir = REPORTS / run() if ours else None
    where = [str(run_dir)] if run_dir is not None and run_dir.is_dir() else ["--latest", str(REPORTS)]
    session.run("evaljig-report", "merge", *where)


@nox.session(python=PYTHON)
def lighteval(session: nox.Session) -> None:
    """The LEV contract matrix against the real lighteval (pinned, uv-installed in the stack venv).

    Every CLI run execs ``lighteval`` as users run it; ``--dist loadfile`` keeps the cases that
    import lighteval in-process on one worker.
    """
    bin_dir = stack.ensure(session, TEST_REQUIREMENTS)
    session.run(
        str(bin_dir / "pytest"), "packages/config-service/tests/lighteval", "-m", "lighteval",
        "-n", workers(), "--dist", "loadfile", "-p", "no:cacheprovider", *LOOPBACK_ONLY, *session.posargs,
        env=stack.stack_env(bin_dir, {**report_env(session), "EVALJIG_REQUIRE_LIGHTEVAL": "1"}),
        success_codes=PYTEST_OK, external=True,
    )  # fmt: skip


@nox.session(python=PYTHON)
def regen(session: nox.Session) -> None:
    """Rebuild fixtures/ byte-for-byte with the real lighteval; ``-- --check`` fails on any drift."""
    bin_dir = stack.ensure(session, TEST_REQUIREMENTS)
    session.run(
        str(bin_dir / "evaljig-fixtures"), "regen", *session.posargs,
        env=stack.stack_env(bin_dir, OFFLINE_ENV), external=True,
    )  # fmt: skip
