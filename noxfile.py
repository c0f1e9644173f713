"""evaljig sessions — the table of contents of everything the project runs.

Every session syncs the workspace from the committed ``uv.lock`` (``--locked``) into its
own venv. pytest's exit code 5 (nothing collected) never fails a session.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
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


def supported_pythons() -> list[str]:
    """Every ``3.X`` the root ``requires-python`` admits: the tests session's matrix."""
    spec = SpecifierSet(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"])
    return [f"3.{minor}" for minor in range(8, 30) if spec.contains(f"3.{minor}.0")]


PYTHONS = supported_pythons()


def _drop_stale_session_dirs() -> None:
    """``lighteval`` and ``regen`` used to run without a venv; nox would "reuse" that folder and find no python."""
    for name in ("lighteval", "regen"):
        folder = ROOT / ".nox" / name
        if folder.is_dir() and not (folder / "bin" / "python").exists():
            shutil.rmtree(folder)


_drop_stale_session_dirs()
#: The default session Python (``make ci``, the lighteval stack); the oldest supported.
PYTHON = PYTHONS[0]
nox.options.sessions = ["lint", "typecheck", f"tests-{PYTHON}", "package", "lighteval", "report"]
PACKAGES = sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists())
#: Tests may talk to servers on this machine only.
LOOPBACK_ONLY = "--allow-hosts=127.0.0.1,::1,localhost"
PYTEST_OK = [0, 5]


REPORTS = ROOT / "reports"


@functools.cache
def run() -> str:
    """This nox invocation's run: every session reports into reports/<run>/<session>/.

    Claimed on first use, so ``nox -l`` or a lone ``nox -s report`` leave no empty run folder.
    """
    return claim_run(REPORTS)


def report_env(session: nox.Session) -> dict[str, str]:
    """Per-case reports for every test of the session (see the README's reporter section)."""
    return {**OFFLINE_ENV, "EVALJIG_RUN": run(), "EVALJIG_SESSION": session.name, "EVALJIG_ALL_TESTS": "1"}


def sync(session: nox.Session, *groups: str) -> None:
    """Install the whole workspace plus dependency ``groups`` exactly as locked."""
    args = ["uv", "sync", "--locked", "--all-packages", "--no-default-groups"]
    args += [f"--group={g}" for g in groups]
    session.run_install(*args, env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location})


def workers() -> str:
    return os.environ.get("EVALJIG_WORKERS", "auto")


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """Unit, snapshot and cassette-replay tests of every package (xdist, network blocked).

    One session per supported Python (``tests-3.11`` ...); ``make ci`` runs the default one,
    ``make matrix`` all of them.
    """
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
    """ruff check, ruff format --check, actionlint over .github/workflows/, mkdocs build --strict over docs/."""
    sync(session, "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("actionlint", *sorted(map(str, ROOT.glob(".github/workflows/*.y*ml"))))
    session.run("mkdocs", "build", "--strict", "--site-dir", str(Path(session.create_tmp()) / "site"))


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
    ours = run.cache_info().currsize > 0 or explicit_run_id() is not None  # sessions of this run wrote
    run_dir = REPORTS / run() if ours else None
    where = [str(run_dir)] if run_dir is not None and run_dir.is_dir() else ["--latest", str(REPORTS)]
    session.run("evaljig-report", "merge", *where)


LIGHTEVAL_VENV = ROOT / ".nox" / "lighteval-stack"
LIGHTEVAL_REQUIREMENTS = ROOT / "ci" / "lighteval-requirements.txt"
LIGHTEVAL_CONSTRAINTS = ROOT / "ci" / "lighteval-constraints.txt"
LIGHTEVAL_PACKAGES = [
    "packages/common",
    "packages/gateway-stub",
    "packages/config-service",
    "packages/fixture-builder",
    "packages/reporter",
]
LIGHTEVAL_TEST_DEPS = ["pytest", "pytest-xdist", "pytest-socket", "syrupy", "pyyaml", "vcrpy"]
#: Bytecode at install time, as pip does: with PYTHONDONTWRITEBYTECODE set (as on these machines)
#: every lighteval process would otherwise recompile torch, transformers and lighteval on import.
STACK_INSTALL_FLAGS = ["--compile-bytecode"]


@nox.session(python=PYTHON)
def lighteval(session: nox.Session) -> None:
    """The LEV contract matrix against the real lighteval (pinned, uv-installed in its own venv)."""
    bin_dir = lighteval_stack(session)
    session.run(
        str(bin_dir / "pytest"), "packages/config-service/tests/lighteval", "-m", "lighteval", "-n", workers(),
        "--dist", "worksteal", "-p", "no:cacheprovider", LOOPBACK_ONLY, *session.posargs,
        env=stack_env(bin_dir, {**report_env(session), "EVALJIG_REQUIRE_LIGHTEVAL": "1"}), success_codes=PYTEST_OK,
        external=True,
    )  # fmt: skip


@nox.session(python=PYTHON)
def regen(session: nox.Session) -> None:
    """Rebuild fixtures/ byte-for-byte with the real lighteval; ``-- --check`` fails on any drift."""
    bin_dir = lighteval_stack(session)
    session.run(
        str(bin_dir / "evaljig-fixtures"), "regen", *session.posargs, env=stack_env(bin_dir, OFFLINE_ENV), external=True
    )


def stack_env(bin_dir: Path, env: dict[str, str]) -> dict[str, str]:
    """The stack's ``bin/`` first on PATH, so ``lighteval`` and our CLIs resolve to it."""
    return {
        **env,
        "PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]),
        "VIRTUAL_ENV": str(bin_dir.parent),
    }


def lighteval_stack(session: nox.Session) -> Path:
    """One venv for the lighteval stack, shared by ``lighteval`` and ``regen``; returns its ``bin/``.

    Built on the interpreter nox resolved for this session (the same as every other session's),
    with uv and this machine's pip sources passed explicitly (see ci/lighteval_stack.py), so a
    CPU torch is picked where one is offered; lighteval and torch never enter uv.lock. The
    stamp is a digest of every input, the interpreter and the sources: any change rebuilds
    from scratch, in a temporary folder renamed into place only when complete.
    """
    python = str(Path(session.virtualenv.location) / "bin" / "python")
    interpreter = session.run(
        python, "-c", "import sys; print(sys.version.split()[0], sys._base_executable)", silent=True, external=True
    )  # fmt: skip
    sources = stack.uv_source_args(stack.pip_settings(stack.pip_config_text(), os.environ), os.environ)
    inputs = [
        LIGHTEVAL_REQUIREMENTS,
        LIGHTEVAL_CONSTRAINTS,
        ROOT / "uv.lock",
        *(ROOT / p / "pyproject.toml" for p in LIGHTEVAL_PACKAGES),
    ]
    digest = stack.digest(inputs, [str(interpreter).strip(), *sources, *STACK_INSTALL_FLAGS])
    stamp, where = f".evaljig-stack-{digest}", LIGHTEVAL_VENV.relative_to(ROOT)
    if stack.is_current(LIGHTEVAL_VENV, stamp):
        session.log(f"lighteval stack is current ({where}, Python {str(interpreter).split()[0]}, inputs {digest})")
        return LIGHTEVAL_VENV / "bin"
    session.log(f"building the lighteval stack into {where} with uv (Python {str(interpreter).strip()})")
    session.log(f"package sources: {shlex.join(sources)}")
    constraints = Path(session.create_tmp()) / "constraints.txt"
    session.run(
        "uv", "export", "--locked", "--all-packages", "--group=dev", "--no-emit-workspace", "--no-hashes",
        "--quiet", "--output-file", str(constraints), external=True,
    )  # fmt: skip
    compatible = constraints.with_name("constraints-compatible.txt")
    compatible.write_text(stack.compatible_constraints(constraints.read_text(), LIGHTEVAL_CONSTRAINTS.read_text()))

    def build(venv: Path) -> None:
        session.run("uv", "venv", "--quiet", "--relocatable", "--python", python, str(venv), external=True)
        session.run(
            "uv", "pip", "install", "--python", str(venv / "bin" / "python"), *sources, *STACK_INSTALL_FLAGS,
            "-r", str(LIGHTEVAL_REQUIREMENTS), "-c", str(LIGHTEVAL_CONSTRAINTS), "-c", str(compatible),
            *LIGHTEVAL_TEST_DEPS,
            *(arg for package in LIGHTEVAL_PACKAGES for arg in ("-e", package)),  # warm runs see source edits
            external=True,
        )  # fmt: skip
        session.run(
            str(venv / "bin" / "python"), "-c",
            # lighteval downloads tinyBenchmarks.pkl when its task registry loads; an empty file stops that
            "import importlib.util, pathlib; spec = importlib.util.find_spec('lighteval');"
            " pkl = pathlib.Path(spec.origin).parent / 'tasks' / 'tasks' / 'tinyBenchmarks.pkl';"
            " pkl.touch(); print('created', pkl.name)",
            external=True,
        )  # fmt: skip

    stack.build_atomically(LIGHTEVAL_VENV, stamp, build)
    return LIGHTEVAL_VENV / "bin"
