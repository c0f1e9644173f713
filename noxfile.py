"""evaljig sessions — the table of contents of everything the project runs.

Every session syncs the workspace from the committed ``uv.lock`` (``--locked``) into its
own venv. pytest's exit code 5 (nothing collected) never fails a session.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import nox

nox.needs_version = ">=2025.5.1"
nox.options.default_venv_backend = "uv"
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = ["lint", "typecheck", "tests", "package", "lighteval", "report"]

ROOT = Path(__file__).parent
PYTHON = "3.11"
PACKAGES = sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists())
#: Tests may talk to servers on this machine only.
LOOPBACK_ONLY = "--allow-hosts=127.0.0.1,::1,localhost"
PYTEST_OK = [0, 5]
OFFLINE_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def _run_id() -> str:
    """The run id from the plugin's own helper (``evaljig_report/runid.py``, stdlib only, loaded by path).

    nox's venv does not have the workspace installed; one helper keeps the sanitising and the
    same-second suffix (a timestamp run folder is claimed exclusively) identical in both places.
    """
    import importlib.util

    path = Path(__file__).parent / "packages" / "reporter" / "src" / "evaljig_report" / "runid.py"
    spec = importlib.util.spec_from_file_location("_evaljig_runid", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    run: str = module.claim_run(Path(__file__).parent / "reports")
    return run


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


LIGHTEVAL_VENV = ROOT / ".nox" / "lighteval-stack"
LIGHTEVAL_REQUIREMENTS = ROOT / "ci" / "lighteval-requirements.txt"
LIGHTEVAL_CONSTRAINTS = ROOT / "ci" / "lighteval-constraints.txt"
LIGHTEVAL_PACKAGES = [
    "packages/gateway-stub",
    "packages/config-service",
    "packages/fixture-builder",
    "packages/reporter",
]
LIGHTEVAL_TEST_DEPS = ["pytest", "pytest-xdist", "pytest-socket", "syrupy", "pyyaml", "vcrpy"]


@nox.session(venv_backend="none")
def lighteval(session: nox.Session) -> None:
    """The LEV contract matrix against the real lighteval (pinned, pip-installed in its own venv)."""
    bin_dir = lighteval_stack(session)
    session.run(
        str(bin_dir / "pytest"), "packages/config-service/tests/lighteval", "-m", "lighteval", "-n", workers(),
        "-p", "no:cacheprovider", LOOPBACK_ONLY, *session.posargs,
        env=stack_env(bin_dir, {**report_env(session), "EVALJIG_REQUIRE_LIGHTEVAL": "1"}), success_codes=PYTEST_OK,
    )  # fmt: skip


@nox.session(venv_backend="none")
def regen(session: nox.Session) -> None:
    """Rebuild fixtures/ byte-for-byte with the real lighteval; ``-- --check`` fails on any drift."""
    bin_dir = lighteval_stack(session)
    session.run(str(bin_dir / "evaljig-fixtures"), "regen", *session.posargs, env=stack_env(bin_dir, OFFLINE_ENV))


def stack_env(bin_dir: Path, env: dict[str, str]) -> dict[str, str]:
    """The stack's ``bin/`` first on PATH, so ``lighteval`` and our CLIs resolve to it."""
    return {
        **env,
        "PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]),
        "VIRTUAL_ENV": str(bin_dir.parent),
    }


def lighteval_stack(session: nox.Session) -> Path:
    """One venv for the lighteval stack, shared by ``lighteval`` and ``regen``; returns its ``bin/``.

    pip (not uv) installs it, so the machine's index and find-links settings pick a CPU torch
    where one is offered; lighteval and torch never enter uv.lock. A stamp holding a digest of
    every input makes warm runs instant; any change rebuilds the venv from scratch.
    """
    inputs = [
        LIGHTEVAL_REQUIREMENTS,
        LIGHTEVAL_CONSTRAINTS,
        ROOT / "uv.lock",
        *(ROOT / p / "pyproject.toml" for p in LIGHTEVAL_PACKAGES),
    ]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in inputs)).hexdigest()[:16]
    bin_dir, stamp = LIGHTEVAL_VENV / "bin", LIGHTEVAL_VENV / f".evaljig-stack-{digest}"
    if stamp.exists():
        session.log(f"lighteval stack is current ({LIGHTEVAL_VENV.relative_to(ROOT)}, inputs {digest})")
        return bin_dir
    session.log(f"installing the lighteval stack into {LIGHTEVAL_VENV.relative_to(ROOT)} (a few minutes when cold)")
    shutil.rmtree(LIGHTEVAL_VENV, ignore_errors=True)
    session.run(f"python{PYTHON}", "-m", "venv", str(LIGHTEVAL_VENV), external=True)
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar=off"]
    session.run(*pip, "-r", str(LIGHTEVAL_REQUIREMENTS), external=True)
    constraints = Path(session.create_tmp()) / "constraints.txt"
    session.run(
        "uv", "export", "--locked", "--all-packages", "--group=dev", "--no-emit-workspace", "--no-hashes",
        "--quiet", "--output-file", str(constraints), external=True,
    )  # fmt: skip
    editable = [arg for package in LIGHTEVAL_PACKAGES for arg in ("-e", package)]  # warm runs see source edits
    session.run(*pip, "-c", str(_compatible(constraints)), *LIGHTEVAL_TEST_DEPS, *editable, external=True)
    session.run(
        str(bin_dir / "python"), "-c",
        # lighteval downloads tinyBenchmarks.pkl when its task registry loads; an empty file stops that
        "import importlib.util, pathlib; spec = importlib.util.find_spec('lighteval');"
        " pkl = pathlib.Path(spec.origin).parent / 'tasks' / 'tasks' / 'tinyBenchmarks.pkl';"
        " pkl.touch(); print('created', pkl.name)",
        external=True,
    )  # fmt: skip
    stamp.touch()
    return bin_dir


def _compatible(constraints: Path) -> Path:
    """uv.lock constraints minus the packages the lighteval stack pins itself."""
    pinned = {
        line.split("==")[0].strip().lower().replace("_", "-")
        for line in LIGHTEVAL_CONSTRAINTS.read_text().splitlines()
        if "==" in line and not line.startswith("#")
    }
    keep = [
        line for line in constraints.read_text().splitlines()
        if line and not line.startswith(("#", " ")) and line.split("==")[0].strip().lower() not in pinned
    ]  # fmt: skip
    out = constraints.with_name("constraints-compatible.txt")
    out.write_text("\n".join(keep) + "\n")
    return out
