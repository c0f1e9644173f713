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
import importlib.util
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import nox
from nox.command import CommandFailed

ROOT = Path(__file__).parent


def _load(name: str, init: str) -> ModuleType:
    """Import one of our stdlib-only modules or packages, from its file unless it is installed.

    nox's venv has neither the noxfile's folder on ``sys.path`` nor the workspace installed;
    ``sys.path`` is left alone.
    """
    if importlib.util.find_spec(name) is not None:  # e.g. the workspace venv imports the noxfile
        return importlib.import_module(name)
    path = ROOT / init
    package = [str(path.parent)] if path.name == "__init__.py" else None
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=package)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: cannot be imported")
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: One run-id and offline-env helper for the sessions and the packages alike (stdlib only).
common = _load("evaljig_common", "packages/common/src/evaljig_common/__init__.py")
stack = _load("lighteval_stack", "ci/lighteval_stack.py")
adoption_run = _load("adoption", "ci/adoption.py")

nox.needs_version = ">=2025.5.1"
nox.options.default_venv_backend = "uv"
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True

PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
#: Installed next to the built wheels and into the lighteval stack.
TEST_REQUIREMENTS = nox.project.dependency_groups(PYPROJECT, "test")
REPORTS = ROOT / "reports"
#: evaljig's own fixtures are built by this script (`nox -s regen`), shaped like the one `evaljig init` writes.
BUILD_SCRIPT = "scripts/testing/build_lighteval_fixture.py"
#: Tests may talk to servers on this machine only (TCP on loopback).
LOOPBACK_ONLY = ["--allow-hosts=127.0.0.1,::1,localhost"]
PYTEST_OK = [0, 5]


#: Every Python the root pyproject's classifiers name: the tests session's matrix.
PYTHONS = nox.project.python_versions(PYPROJECT)
#: The default session Python (``make ci``, the lighteval stack); the oldest supported.
PYTHON = PYTHONS[0]
nox.options.sessions = [
    "lint", "typecheck", f"tests-{PYTHON}", "package", "lighteval", "adoption", "coverage", "report",
]  # fmt: skip
#: The last ``nox -s coverage`` figure, which ``make ci``'s summary prints.
COVERAGE_TOTAL = REPORTS / "coverage-total.txt"


#: Each session's CPU seconds in the newest nox run, which ``make``'s summary prints (ci/nox_summary.py).
SESSION_CPU = ROOT / ".tools" / "last-nox-cpu.json"
#: This nox invocation (the noxfile is imported once per invocation): a file another one left is started afresh.
INVOCATION = f"{os.getpid()}-{time.time_ns()}"
SessionFunction = Callable[..., None]


def session_with_cpu(**options: Any) -> Callable[[SessionFunction], SessionFunction]:
    """``nox.session(**options)``, the session's CPU recorded in :data:`SESSION_CPU` when it ends.

    CPU, not wall time, is what bounds ``make ci`` on a small machine (every session keeps its cores
    busy), so the summary shows where it goes. It is the user plus system time of every process
    the session started and waited for (their own children included), whatever the outcome.
    """

    def decorate(func: SessionFunction) -> SessionFunction:
        @functools.wraps(func)
        def counted(session: nox.Session, *args: Any, **kwargs: Any) -> None:
            before = _children_cpu()
            try:
                func(session, *args, **kwargs)
            finally:
                try:
                    _record_cpu(session.name, _children_cpu() - before)
                except OSError as exc:  # a figure for the summary: never the reason a session fails
                    session.warn(f"could not record this session's CPU in {SESSION_CPU}: {exc}")

        return nox.session(**options)(counted)

    return decorate


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _record_cpu(name: str, seconds: float, path: Path | None = None, invocation: str = INVOCATION) -> None:
    """Add ``name``'s CPU to ``path`` (:data:`SESSION_CPU`), written whole, then renamed into place; a file
    another nox invocation left is started afresh."""
    path = SESSION_CPU if path is None else path
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        recorded = {}
    if not isinstance(recorded, dict) or recorded.get("invocation") != invocation:
        recorded = {"invocation": invocation, "sessions": {}}
    recorded["sessions"][name] = round(seconds, 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(recorded, indent=1) + "\n", encoding="utf-8")
    partial.replace(path)


@functools.cache
def run() -> str:
    """This nox invocation's run: every session reports into reports/<run>/<session>/.

    Claimed on first use, so ``nox -l`` or a lone ``nox -s report`` leave no empty run folder.
    """
    return common.claim_run(REPORTS)


def report_env(session: nox.Session) -> dict[str, str]:
    """Offline, and per-case reports for every test of the session (see docs/reporter.md)."""
    return {**common.OFFLINE_ENV, "EVALJIG_RUN": run(), "EVALJIG_SESSION": session.name, "EVALJIG_ALL_TESTS": "1"}


def coverage_dir() -> Path:
    return REPORTS / run() / "coverage"


def measured(session: nox.Session) -> tuple[list[str], dict[str, str]]:
    """pytest's coverage flags and environment: branch data of this session into this run's coverage folder.

    xdist workers and the Python subprocesses the tests start (coverage's ``patch = subprocess``)
    write their own data files there; ``nox -s coverage`` combines them.
    """
    data = coverage_dir() / session.name  # one folder per session: its name may hold dots (tests-3.11)
    data.mkdir(parents=True, exist_ok=True)
    # the floor (fail_under) is the combined figure's, checked by ``nox -s coverage``, not each session's
    return ["--cov", "--cov-report=", "--cov-fail-under=0"], {"COVERAGE_FILE": str(data / ".coverage")}


def sync(session: nox.Session, *groups: str) -> None:
    """Install the whole workspace plus dependency ``groups`` exactly as locked."""
    args = ["uv", "sync", "--locked", "--all-packages", "--no-default-groups"]
    args += [f"--group={g}" for g in groups]
    session.run_install(*args, env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location})


def writes_bytecode(session: nox.Session) -> None:
    """Let this session's processes write bytecode, even where the machine sets ``PYTHONDONTWRITEBYTECODE``.

    pytest caches its assertion rewrites of every plugin package (hypothesis, syrupy, evaljig's own)
    and test module only where bytecode may be written; with the variable set (as on evaljig's CI
    machines) each of the thousands of pytest, CLI and lighteval processes a session starts
    recompiled them all. Measured side by side: the review package's tests took 265 s (163 s of
    CPU) with it set and 82 s (90 s of CPU) without. Bytecode goes to ``__pycache__/`` (ignored).
    """
    session.env["PYTHONDONTWRITEBYTECODE"] = None  # nox drops a None from the environment it runs with


def workers() -> str:
    """xdist's ``-n``: ``EVALJIG_WORKERS``, else one worker per CPU."""
    return os.environ.get("EVALJIG_WORKERS", "auto")


@session_with_cpu(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """Every test in pyproject's testpaths but the LEV matrix, under xdist, network limited to loopback.

    One session per supported Python (``tests-3.11`` ...); ``make ci`` runs the default one,
    ``make matrix`` all of them. ``--dist worksteal``: a worker that runs out of tests takes half of
    the other's queue, so long tests (a pip install, subprocess pytest runs) left queued near the end
    do not wait behind each other while a core is idle. ``--durations=20`` ends it with the slowest
    tests, where the session's time goes. The ``lint`` group too: the scaffolded workflow's test runs
    actionlint on it.
    """
    writes_bytecode(session)
    sync(session, "dev", "lint")
    cov_args, cov_env = measured(session)
    session.run(
        "pytest", "-n", workers(), "--dist", "worksteal", *LOOPBACK_ONLY, "-m", "not lighteval", *cov_args,
        "--durations=20", *session.posargs,
        env={**report_env(session), **cov_env}, success_codes=PYTEST_OK,
    )  # fmt: skip


@session_with_cpu(python=PYTHON)
def snapshots(session: nox.Session) -> None:
    """Every test but the LEV matrix in one process (no xdist), so syrupy sees all of golden/.

    ``-- --snapshot-update`` rewrites golden/ (``make golden-update``).
    """
    writes_bytecode(session)
    sync(session, "dev")
    session.run(
        "pytest", "-m", "not lighteval", *LOOPBACK_ONLY, *session.posargs,
        env=report_env(session), success_codes=PYTEST_OK,
    )  # fmt: skip


@session_with_cpu(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff, ruff format --check, the package layering (lint-imports), actionlint, hadolint, mkdocs build --strict."""
    sync(session, "lint")
    session.run("ruff", "check", ".")
    session.run("lint-imports")
    session.run("ruff", "format", "--check", ".")
    session.run("actionlint", *sorted(map(str, ROOT.glob(".github/workflows/*.y*ml"))))
    session.run("hadolint", *sorted(map(str, ROOT.glob("packages/*/Dockerfile"))))
    session.run("mkdocs", "build", "--strict", "--site-dir", str(Path(session.create_tmp()) / "site"))


@session_with_cpu(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy (strict, as configured in pyproject.toml) over every package's src/.

    ``--num-workers auto``: mypy 2's parallel checking, one worker per core (measured from a cold cache
    on 2 cores: 30 s instead of 46 s, the same CPU, the same errors found).
    """
    sync(session, "dev", "lint")
    session.run("mypy", "--num-workers", "auto")


@session_with_cpu(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Run every packages/*/benchmarks/bench_*.py: they print figures and ratios and assert nothing on time."""
    writes_bytecode(session)
    sync(session, "dev")
    for script in sorted(ROOT.glob("packages/*/benchmarks/bench_*.py")):
        session.run("python", str(script), *session.posargs)


#: This nox run's wheels once built: ``package`` and ``adoption`` install the same files.
_built_wheels: Path | None = None


def wheels(session: nox.Session) -> Path:
    """Every workspace package's wheel and the meta-package's, built once per nox run into this session's tmp."""
    global _built_wheels  # one build per nox process, whichever session asks first
    if _built_wheels is not None:
        session.log(f"wheels: the ones built earlier in this run ({_built_wheels})")
        return _built_wheels
    out = Path(session.create_tmp()).resolve() / "wheels"  # absolute: adoption's teams install from other folders
    session.run("uv", "build", "--all-packages", "--wheel", "--clear", "--out-dir", str(out), external=True)
    session.run("uv", "build", "packages/evaljig", "--wheel", "--out-dir", str(out), external=True)
    _built_wheels = out
    return out


@session_with_cpu(python=PYTHON, reuse_venv=False)
def package(session: nox.Session) -> None:
    """Build every wheel and check what ships, install them in a fresh venv, test the installed corpus.

    The fixture builder's CLI validates the corpus and its tests run against the installed wheel.
    """
    writes_bytecode(session)
    dist = wheels(session)
    constraints = Path(session.create_tmp()) / "constraints.txt"
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


@session_with_cpu(python=PYTHON)
def dist(session: nox.Session) -> None:
    """Wheels and sdists of every package, the meta-package ``evaljig`` included, into dist/; then check them.

    ``uv build`` makes each sdist, then the wheel from that sdist, so every sdist builds on its own.
    The meta-package is no workspace member (its lighteval extra stays out of uv.lock): it is built by
    itself. ``pip install --find-links dist evaljig`` then installs it (docs/development.md#dist).
    """
    out = str(ROOT / "dist")
    session.run("uv", "build", "--all-packages", "--clear", "--out-dir", out, external=True)
    session.run("uv", "build", str(ROOT / "packages" / "evaljig"), "--out-dir", out, external=True)
    session.run("python", "ci/check_wheels.py", "--sdist", out)


@session_with_cpu(python=PYTHON)
def coverage(session: nox.Session) -> None:
    """Combine this run's coverage (every session, worker and subprocess) and report it; fail under the floor.

    The floor is ``fail_under`` in pyproject.toml, measured on ``make ci``'s sessions (tests and
    the LEV matrix). The total goes to reports/coverage-total.txt for ``make ci``'s summary.
    """
    session.install("coverage[toml]>=7.10")
    data = coverage_dir()
    parts = sorted(p for p in data.glob("*/.coverage*") if p.is_file()) if data.is_dir() else []
    if not parts:
        session.skip(f"no coverage data in {data.relative_to(ROOT)}: run a tests or lighteval session first")
    combined = str(data / ".coverage")
    session.run("coverage", "combine", "--keep", "--quiet", f"--data-file={combined}", *map(str, parts))
    session.run("coverage", "html", f"--data-file={combined}", "--directory", str(data / "html"), "--quiet")
    total = session.run(
        "coverage", "report", f"--data-file={combined}", "--format=total", silent=True, success_codes=[0, 2]
    )
    figure = str(total).strip().splitlines()[-1]
    sessions = ", ".join(sorted({p.parent.name for p in parts}))
    COVERAGE_TOTAL.write_text(
        f"coverage: {figure}% of branches and lines ({sessions}; {data.relative_to(ROOT)}/html)\n"
    )
    session.run("coverage", "report", f"--data-file={combined}", "--skip-covered", "--sort=cover")


@session_with_cpu(python=PYTHON)
def report(session: nox.Session) -> None:
    """Merge this run's reports (every session's and worker's) into reports/<run>/merged/, else the newest run's."""
    sync(session)
    ours = run.cache_info().currsize > 0 or common.explicit_run_id() is not None  # sessions of this run wrote
    run_dir = REPORTS / run() if ours else None
    where = [str(run_dir)] if run_dir is not None and run_dir.is_dir() else ["--latest", str(REPORTS)]
    session.run("evaljig-report", "merge", *where)


@session_with_cpu(python=PYTHON)
def lighteval(session: nox.Session) -> None:
    """The LEV contract matrix against the real lighteval (pinned, uv-installed in the stack venv).

    Every CLI run execs ``lighteval`` as users run it; ``--dist load`` hands the cases out one by one to
    whichever worker is free (``loadfile`` left a worker idle: 321 s became 221 s), except that the
    cases importing lighteval in-process (~13 s of CPU each time) share one worker (the LEV conftest).
    """
    writes_bytecode(session)
    bin_dir = stack.ensure(session, TEST_REQUIREMENTS)
    cov_args, cov_env = measured(session)
    session.run(
        str(bin_dir / "pytest"), "packages/config-service/tests/lighteval", "-m", "lighteval",
        "-n", workers(), "--dist", "load", "-p", "no:cacheprovider", *LOOPBACK_ONLY, *cov_args, *session.posargs,
        env=stack.stack_env(bin_dir, {**report_env(session), **cov_env, "EVALJIG_REQUIRE_LIGHTEVAL": "1"}),
        success_codes=PYTEST_OK, external=True,
    )  # fmt: skip


@session_with_cpu(python=PYTHON)
def regen(session: nox.Session) -> None:
    """Rebuild fixtures/ byte-for-byte with the real lighteval; ``-- --check`` fails on any drift.

    Runs evaljig's own build script (scripts/testing/build_lighteval_fixture.py): the public builder
    factories and ``regen_main``, exactly what a team's scaffolded build script runs.
    """
    writes_bytecode(session)
    bin_dir = stack.ensure(session, TEST_REQUIREMENTS)
    session.run(
        str(bin_dir / "python"), BUILD_SCRIPT, *session.posargs,
        env=stack.stack_env(bin_dir, common.OFFLINE_ENV), external=True,
    )  # fmt: skip


@session_with_cpu(python=PYTHON, reuse_venv=False)
def adoption(session: nox.Session) -> None:
    """What a new team does, outside the checkout, once with pip and once with uv (ci/adoption.py).

    ``evaljig[lighteval]`` from the wheels in ``dist/`` (else this run's, built once: :func:`wheels`),
    with **no constraints file**: the extra's bounds alone; then the stack check, ``evaljig init``,
    the builder and the scaffolded LEV suite (once, when both resolved the same stack and wrote the same
    fixtures: ``SharedSuite``). The two installers' runs go side by side,
    each line of their output prefixed ``[pip]``/``[uv]``; the resolved stack and each step's wall
    time are printed at the end, and a failure names the installer, the step and its last lines.
    """
    writes_bytecode(session)
    started = time.perf_counter()
    tmp = Path(session.create_tmp()).resolve()
    work = Path(tempfile.mkdtemp(prefix="evaljig-adoption-"))  # outside the checkout: no conftest, no pyproject
    dist = ROOT / "dist"
    if not list(dist.glob("evaljig-*.whl")):  # the meta-package's wheel: make dist has not run
        dist = wheels(session)
    python = str(Path(session.virtualenv.location) / "bin" / "python")
    settings = stack.pip_settings(stack.pip_config_text(), os.environ)
    legs = {installer: adoption_run.Leg(session, installer) for installer in ("pip", "uv")}
    team = functools.partial(
        adoption_run.adopt, work=work, dist=dist, python=python,
        env={**common.OFFLINE_ENV, "PATH": os.environ.get("PATH", "")},
        uv_env=adoption_run.uv_source_env(settings), private=[ROOT, work, tmp],
        suite=adoption_run.SharedSuite(),
    )  # fmt: skip
    runs = {name: functools.partial(team, leg) for name, leg in legs.items()}
    resolved, failures = adoption_run.run_side_by_side(runs)
    shutil.rmtree(work, ignore_errors=True)
    for leg in legs.values():
        for name, seconds in leg.steps:
            session.log(f"adoption: {name:<38} {seconds:7.1f} s")
        session.log(f"adoption: {leg.name + ' in all':<38} {sum(s for _, s in leg.steps):7.1f} s")
    session.log(f"adoption: {'both side by side, wall':<38} {time.perf_counter() - started:7.1f} s")
    for installer, versions in resolved.items():
        session.log(f"adoption: {installer} resolved " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    if failures:
        session.error("\n".join(failures))


#: The real clients of ``nox -s clients``: one ``# [client]`` section of exact pins per venv (docs/ci.md#real-clients).
CLIENTS_REQUIREMENTS = ROOT / "ci" / "clients-requirements.txt"
#: Every client talks to the gateway on loopback only, with a fake key, and never fetches a price map or a tokenizer.
CLIENTS_ENV = {
    "OPENAI_API_KEY": "sk-evaljig-fake-0000",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "INSPECT_DISPLAY": "none",
}
#: Installed editable next to each client: the gateway, the reporter for per-case reports, and the review
#: (its pytest plugin owns the root pyproject's evaljig_golden_* ini options, which --strict-config checks).
CLIENTS_PACKAGES = ("packages/common", "packages/gateway-stub", "packages/reporter", "packages/review")


def client_sections(text: str) -> dict[str, list[str]]:
    """``{client: [requirement, ...]}`` from the ``# [client]`` sections of ci/clients-requirements.txt."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("# [") and line.endswith("]"):
            current = sections.setdefault(line[3:-1], [])
        elif line and not line.startswith("#"):
            if current is None:
                raise ValueError(f"{CLIENTS_REQUIREMENTS.name}: {line!r} comes before any '# [client]' section")
            current.append(line)
    return sections


@session_with_cpu(python=PYTHON)
def clients(session: nox.Session) -> None:
    """Real client libraries against a live gateway, one feature per test; prints the client x feature table.

    openai, litellm, pydantic-ai, langchain-openai, instructor, lm-eval and inspect-ai, each at its
    pinned current release (ci/clients-requirements.txt) in its own venv next to the gateway, built
    with uv and this machine's pip sources as the lighteval stack is, and reused while its inputs are
    unchanged. Each venv runs ci/clients/test_<client>.py; the merged table is printed at the end.
    Not in ``make ci``: it runs nightly and as ``make clients``.
    """
    writes_bytecode(session)
    matrix = _load("clients_matrix", "ci/clients/matrix.py")
    sources = stack.machine_sources()
    python = str(Path(session.virtualenv.location) / "bin" / "python")
    outcomes = Path(session.create_tmp()) / "outcomes"
    shutil.rmtree(outcomes, ignore_errors=True)
    outcomes.mkdir()
    started = time.perf_counter()
    failed: list[str] = []
    for name, requirements in client_sections(CLIENTS_REQUIREMENTS.read_text()).items():
        inputs = [ROOT / "uv.lock", *(ROOT / p / "pyproject.toml" for p in CLIENTS_PACKAGES)]
        facts = [sys.version, python, *sources, *requirements, *TEST_REQUIREMENTS]
        target = ROOT / ".nox" / f"clients-{name}"

        def build(venv: Path, requirements: list[str] = requirements) -> None:
            session.run("uv", "venv", "--quiet", "--relocatable", "--python", python, str(venv), external=True)
            session.run(
                "uv", "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), *sources,
                *stack.INSTALL_FLAGS, *requirements, *TEST_REQUIREMENTS,
                *(arg for package in CLIENTS_PACKAGES for arg in ("-e", package)), external=True,
            )  # fmt: skip

        if stack.build_atomically(target, f".evaljig-clients-{stack.digest(inputs, facts)}", build):
            session.log(f"clients: built {target.relative_to(ROOT)} ({' '.join(requirements)})")
        tests = ROOT / "ci" / "clients" / f"test_{name.replace('-', '_')}.py"
        env = {**report_env(session), **CLIENTS_ENV, "EVALJIG_CLIENTS_OUTCOMES": str(outcomes / f"{name}.json")}
        try:
            session.run(
                str(target / "bin" / "python"), "-m", "pytest", str(tests.relative_to(ROOT)), "-p", "no:cacheprovider",
                "-p", "no:randomly", "-W", "default", *LOOPBACK_ONLY, *session.posargs,
                env=stack.stack_env(target / "bin", env), success_codes=PYTEST_OK, external=True,
            )  # fmt: skip
        except CommandFailed:
            failed.append(name)
    session.log("real clients: client x feature (PASS, FAIL, SKIP, XFAIL: a known gateway bug)")
    files = sorted(outcomes.glob("*.json"))
    merged = matrix.read_outcomes(files)
    for line in matrix.matrix_lines(merged):
        session.log(line)
    session.log("real clients: client x failure (issue 31's behaviours), then what each client raised or returned")
    for line in [*matrix.matrix_lines(merged, matrix.FAILURES), *matrix.seen_lines(matrix.read_seen(files))]:
        session.log(line)
    session.log(f"clients: {time.perf_counter() - started:.0f} s wall")
    if failed:
        session.error(f"clients failing: {', '.join(failed)}")
