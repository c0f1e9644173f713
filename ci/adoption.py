"""``nox -s adoption``: what a new team does, outside the checkout, with each installer a team uses.

Both runs install ``evaljig[lighteval]`` from the wheels in ``dist/`` exactly as docs/project.md
says, with **no constraints file**: the extra's own bounds (``evaljig_config.STACK_BOUNDS``) are
all that keep the stack runnable, so a breaking upstream release inside them fails here, not at a
team. Then each runs the stack check, ``evaljig init``, the scaffold's builder, and what the
scaffolded workflow runs: the LEV suite (the real lighteval), whose LEV-004 runs the builder's
``--check`` without lighteval while LEV-001 checks the CLI golden against its own lighteval run.
When the two installers resolved the same stack and their builders wrote the same fixtures, the
suite runs once, in the first team to get there (:class:`SharedSuite`): the other's would start the
same lighteval processes on the same wheels and fixtures.

- **pip**: ``python -m venv`` and ``pip install --find-links DIST 'evaljig[lighteval]'`` with this
  machine's pip configuration, as a user's shell has it;
- **uv**: a uv project whose ``pyproject.toml`` names the wheels' folder in ``[tool.uv]
  find-links`` by a relative path (the portable form: the lock must hold no path of the project's
  machine), ``uv add 'evaljig[lighteval]'``, and ``uv run`` for every command. uv does not read
  pip's configuration, so this machine's pip sources (where its CPU torch is) are handed to uv as
  its own ``UV_*`` variables, as a team sets its own index.

Stdlib only: the noxfile loads it from the ``.tools`` venv, the tests from the workspace venv.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

#: What the team installs: the meta-package with the stack, and what the scaffolded suite uses
#: (``evaljig_fixtures``' ``TEAM_TEST_PACKAGES``: ci/tests/test_adoption.py keeps the two equal).
REQUIREMENTS = ("evaljig[lighteval]", "pytest-cov", "pytest-split", "pytest-xdist")
#: The team's provider, model and key variable, as ``evaljig init`` takes them.
INIT_OPTIONS = ("--provider", "acme", "--model", "openai/acme-small", "--api-key-env", "ACME_TOKEN", "--no-build")
BUILDER = "../scripts/testing/build_lighteval_fixture.py"
#: The scaffolded LEV suite's command (``evaljig_fixtures``' ``LEV_SUITE_COMMAND``: the docs' and the workflow's).
LEV_COMMAND = "pytest -m lighteval --no-cov -n auto"
#: ``python`` + this: the command as a module, without writing a pytest cache into the team's repository.
LEV_SUITE = ("-m", *LEV_COMMAND.split(), "-p", "no:cacheprovider")
#: The packages whose resolved versions the session prints for each installer.
REPORTED = ("evaljig", "lighteval", "litellm", "openai", "torch", "transformers", "datasets", "huggingface-hub")
WHEELS = "wheels"
#: A current pip, as docs/project.md says to install first (the one a new venv bundles cannot resolve the stack).
PIP = "pip"
#: Lines of a failed step's output repeated in the session's error.
TAIL_LINES = 30
#: What the builder writes under the team's run folder (``backend/``): compared between the two teams.
FIXTURES = Path("tests/lighteval/fixtures")
#: Installer tools a freeze may list or leave out (pip's venv has pip, uv's has none): not part of the stack.
INSTALLER_TOOLS = frozenset({"pip", "setuptools", "wheel", "distribute"})


class Session(Protocol):
    """What the adoption run needs of a ``nox.Session``."""

    @property
    def env(self) -> Mapping[str, str | None]: ...

    def log(self, *args: Any, **kwargs: Any) -> None: ...


class StepFailedError(Exception):
    """A step of one installer's run exited non-zero: names the run, the step, the command and its last lines."""


class Leg:
    """One installer's run: its steps run one after another, each in its own folder, output prefixed.

    The pip and uv runs go side by side in two threads (pip's install is mostly one core of
    unpacking while uv's run is lighteval on the other), so a step is a plain ``subprocess`` with
    its own ``cwd``: ``session.chdir`` changes the whole process's folder, and ``session.run``
    has no ``cwd``. Each output line is printed as it comes, prefixed ``[pip]`` or ``[uv]``.
    """

    _print_lock = threading.Lock()

    def __init__(self, session: Session, name: str) -> None:
        self.session, self.name = session, name
        self.steps: list[tuple[str, float]] = []

    def step(self, step: str, cwd: Path, *args: str, env: Mapping[str, str | None] | None = None) -> str:
        """Run ``args`` in ``cwd`` with the session's environment plus ``env`` (``None`` removes a variable)."""
        merged: dict[str, str | None] = {**os.environ, **self.session.env, **(env or {})}
        started = time.perf_counter()
        self.note(f"$ {' '.join(args)}  (in {cwd})")
        with subprocess.Popen(
            args, cwd=cwd, env={k: v for k, v in merged.items() if v is not None},
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
        ) as process:  # fmt: skip
            assert process.stdout is not None
            lines: list[str] = []
            for line in process.stdout:
                lines.append(line)
                self.note(line.rstrip("\n"))
        seconds = time.perf_counter() - started
        self.steps.append((f"{self.name}: {step}", seconds))
        if process.returncode != 0:
            tail = "".join(lines[-TAIL_LINES:])
            raise StepFailedError(
                f"{self.name}: {step} failed (exit {process.returncode} after {seconds:.0f} s): {' '.join(args)}\n"
                f"in {cwd}; its last lines:\n{tail}"
            )
        return "".join(lines)

    def note(self, line: str) -> None:
        """Print ``line`` (a command's output or this run's own) with the run's prefix."""
        with self._print_lock:
            print(f"[{self.name}] {line}", flush=True)


def run_side_by_side(legs: Mapping[str, Callable[[], dict[str, str]]]) -> tuple[dict[str, dict[str, str]], list[str]]:
    """Run each leg in its own thread; returns each finished leg's result and every failed leg's message.

    A failing leg does not stop the other: both installers' outcomes are reported together.
    """
    results: dict[str, dict[str, str]] = {}
    failures: dict[str, str] = {}

    def run(name: str, leg: Callable[[], dict[str, str]]) -> None:
        try:
            results[name] = leg()
        except StepFailedError as error:
            failures[name] = str(error)
        except Exception as error:  # a bug in this script: still report it with the leg's name
            failures[name] = f"{name}: {type(error).__name__}: {error}"

    threads = [threading.Thread(target=run, args=item, name=f"adoption-{item[0]}") for item in legs.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {name: results[name] for name in legs if name in results}, [failures[n] for n in legs if n in failures]


class SharedSuite:
    """The scaffolded LEV suite once for both teams when it would run the same thing twice.

    Each team files its stack (:func:`stack_of` its freeze) as soon as it is installed. The first team
    to reach its LEV suite runs it. The other, reaching its own, skips it when its stack is the first's
    to the last package and its builder wrote the same fixtures (the builders are deterministic): the
    same wheels and fixtures make the same lighteval runs, about 150 s of CPU on a 2-core machine.
    A different resolution or different fixtures run the suite again, so an installer-specific stack
    is still tested; a team that failed before its suite runs none, and the other runs its own.
    """

    def __init__(self) -> None:
        self._stacks: dict[str, dict[str, str]] = {}
        self._runner: tuple[str, Path] | None = None
        self._lock = threading.Lock()

    def file(self, team: str, stack: dict[str, str]) -> None:
        """``team``'s resolved stack; only the first filing counts."""
        with self._lock:
            self._stacks.setdefault(team, stack)

    def stands_in(self, team: str, fixtures: Path) -> tuple[str, str]:
        """``("", why)`` when ``team`` runs the suite itself (``fixtures``: its builder's folder), else
        ``(other, why)``: the team whose run stands for this one's, and why it may."""
        with self._lock:
            if self._runner is None:
                self._runner = (team, fixtures)
                return "", "the first team at its LEV suite runs it"
            other, theirs = self._runner
            mine, stack = self._stacks.get(team), self._stacks.get(other)
        if mine is None or stack is None:
            return "", f"the stack of {team if mine is None else other} is unknown"
        if stack != mine:
            changed = sorted(name for name in stack.keys() | mine.keys() if stack.get(name) != mine.get(name))
            return "", f"{team} resolved a different stack from {other}'s: {', '.join(changed[:8])}"
        differing = different_files(theirs, fixtures)
        if differing:
            return "", f"{team}'s builder wrote different fixtures from {other}'s: {', '.join(differing[:8])}"
        return other, f"the same {len(mine)} packages and the same fixtures as {other}, whose suite runs"


def stack_of(freeze: str) -> dict[str, str]:
    """``name -> version`` of every package in a ``pip freeze``/``uv pip freeze``, installer tools left out.

    ``name @ url`` lines (a wheel from a folder) take the version from the wheel's file name.
    """
    stack: dict[str, str] = {}
    for line in freeze.splitlines():
        name, sep, version = line.partition("==")
        if not sep:
            name, sep, url = line.partition(" @ ")
            wheel = url.rsplit("/", 1)[-1]
            version = wheel.split("-")[1] if sep and wheel.endswith(".whl") and wheel.count("-") >= 4 else url
        if sep and _normal(name) not in INSTALLER_TOOLS:
            stack[_normal(name)] = version.strip()
    return dict(sorted(stack.items()))


def different_files(one: Path, other: Path) -> list[str]:
    """Relative paths of the files whose bytes differ between two folders, or that only one has."""
    names = {
        path.relative_to(root).as_posix()
        for root in (one, other)
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts  # bytecode of a task module lighteval imported
    }
    return sorted(name for name in names if not _same_file(one / name, other / name))


def _same_file(one: Path, other: Path) -> bool:
    return one.is_file() and other.is_file() and one.read_bytes() == other.read_bytes()


def uv_source_env(settings: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """pip's package sources (``lighteval_stack.pip_settings``) as uv's variables: a team's own index settings.

    ``unsafe-best-match`` lets ``torch==X`` be met by ``X+cpu`` from a find-links folder or a CPU
    index rather than by the CUDA build on PyPI, as the stack venv does.
    """
    env = {"UV_INDEX_STRATEGY": "unsafe-best-match"}
    if settings.get("index-url"):
        env["UV_DEFAULT_INDEX"] = settings["index-url"][0]
    if settings.get("extra-index-url"):
        env["UV_INDEX"] = " ".join(settings["extra-index-url"])
    if settings.get("find-links"):
        env["UV_FIND_LINKS"] = ",".join(settings["find-links"])
    return env


def uv_project_toml(name: str, python: str) -> str:
    """A team's ``pyproject.toml`` before ``uv add``: the wheels' folder as a project-relative find-links."""
    return (
        f'[project]\nname = "{name}"\nversion = "0.1.0"\nrequires-python = ">={python}"\ndependencies = []\n\n'
        "[tool.uv]\n# evaljig's wheels until it is on PyPI; relative, so uv.lock stays portable\n"
        f'find-links = ["{WHEELS}"]\n'
        "# bytecode at install, as pip does (docs/project.md): with PYTHONDONTWRITEBYTECODE set, every\n"
        "# lighteval process would otherwise recompile torch, transformers and lighteval as it imports them\n"
        "compile-bytecode = true\n"
    )


def lock_problems(lock: str, private: Sequence[Path]) -> list[str]:
    """Lines of ``uv.lock`` that name a path of this machine under ``private`` (the project, the checkout).

    A lock holding an absolute path of this machine (its checkout's ``dist``) breaks on every other
    machine; the portable form records ``registry = "wheels"``.
    """
    roots = sorted({str(p) for p in private}, key=len, reverse=True)
    found = []
    for number, line in enumerate(lock.splitlines(), 1):
        if any(root in line for root in roots):
            found.append(f"uv.lock:{number}: {line.strip()[:160]}")
    return found


def resolved_versions(freeze: str, names: Sequence[str] = REPORTED) -> dict[str, str]:
    """``name -> version`` of the packages in ``names``, from a freeze read by :func:`stack_of`."""
    wanted = {_normal(n) for n in names}
    return {name: version for name, version in stack_of(freeze).items() if name in wanted}


def pip_install_argv(python: Path, dist: Path) -> list[str]:
    """The pip team's install, as docs/project.md gives it (with this machine's pip configuration).

    Not ``--quiet``: pip's resolver speaks at INFO level, and its backtracking is what a user waits
    on (:func:`pip_backtracking` reads it); no progress bars in a log.
    """
    return [
        str(python), "-m", "pip", "install", "--progress-bar", "off", "--disable-pip-version-check",
        "--find-links", str(dist), *REQUIREMENTS,
    ]  # fmt: skip


def pip_backtracking(output: str) -> list[str]:
    """The packages pip walked back through, when it told the user "This is taking longer than usual".

    pip prints "pip is looking at multiple versions of X" after a few rejected candidates of X, and
    the longer message once backtracking passes its own threshold: the point where a user waits.
    Short walks (a few small wheels) stay below it and return nothing.
    """
    if "This is taking longer than usual" not in output:
        return []
    names = re.findall(r"pip is (?:still )?looking at multiple versions of (\S+) ", output)
    return sorted(set(names)) or ["(pip did not name them)"]


#: Where the extra's resolver hints live: the file a backtracking failure sends the reader to.
RESOLVER_HINTS_FILE = "packages/config-service/src/evaljig_config/_stack_bounds.py"


def backtracking_failure(output: str) -> str | None:
    """The pip team's failure when its install backtracked (:func:`pip_backtracking`): what, where, the fix."""
    walked = pip_backtracking(output)
    if not walked:
        return None
    return (
        f'pip: install evaljig[lighteval] backtracked ("This is taking longer than usual") through '
        f"releases of {', '.join(walked)}: a new release moved a conflict that the extra's resolver hints "
        f"(RESOLVER_HINTS in {RESOLVER_HINTS_FILE}, docs/project.md 'Resolver hints') no longer steer "
        "around. See which pair pip rejects with `make dist`, then in a fresh venv "
        "`pip install --dry-run --ignore-installed --find-links dist 'evaljig[lighteval]'` (its INFO lines), "
        "bound it in RESOLVER_HINTS and rerun `nox -s adoption`"
    )


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.strip().lower())


def adopt(
    leg: Leg,
    *,
    work: Path,
    dist: Path,
    python: str,
    env: Mapping[str, str | None],
    uv_env: Mapping[str, str],
    private: Sequence[Path],
    suite: SharedSuite | None = None,
) -> dict[str, str]:
    """One team's run with ``leg.name`` (``pip`` or ``uv``) in ``work``; returns the stack's resolved versions.

    With ``suite``, the team files its stack there once installed and runs the LEV suite unless the
    other team's run stands for it (:class:`SharedSuite`)."""
    installer = leg.name
    repo = work / f"team-{installer}"
    repo.mkdir(parents=True)
    leg.step("git init", work, "git", "init", "--quiet", str(repo))
    if installer == "pip":
        venv = repo / ".venv"
        leg.step("venv", repo, python, "-m", "venv", str(venv))
        bin_dir = venv / "bin"
        # the pip a new venv bundles (23.x) cannot resolve lighteval's litellm[caching] next to a bounded
        # litellm (it picks different wheels for the extra and the base: ResolutionImpossible); docs/project.md
        leg.step(
            "upgrade pip", repo, str(bin_dir / "python"), "-m", "pip", "install", "--quiet",
            "--disable-pip-version-check", "--upgrade", PIP,
        )  # fmt: skip
        installed = leg.step("install evaljig[lighteval]", repo, *pip_install_argv(bin_dir / "python", dist))
        failure = backtracking_failure(installed)
        if failure is not None:
            raise StepFailedError(failure)
        leg.step("pip check", repo, str(bin_dir / "python"), "-m", "pip", "check")
        run: Callable[..., list[str]] = lambda *args: [str(bin_dir / args[0]), *args[1:]]  # noqa: E731
        team_env: dict[str, str | None] = {
            **env,
            "PATH": f"{bin_dir}:{env.get('PATH') or ''}",
            "VIRTUAL_ENV": str(venv),
        }
        freeze_cmd = [str(bin_dir / "python"), "-m", "pip", "freeze"]
    else:
        wheels = repo / WHEELS
        wheels.mkdir()
        for wheel in sorted(dist.glob("*.whl")):
            shutil.copy2(wheel, wheels / wheel.name)
        (repo / "pyproject.toml").write_text(uv_project_toml("team-evals", "3.11"), encoding="utf-8")
        # the project's own .venv, named: nox sets VIRTUAL_ENV to its session venv for every command, and
        # uv would otherwise sync the team's stack into that
        team_env = {
            **env, **uv_env, "UV_PYTHON": python, "UV_PYTHON_DOWNLOADS": "never",
            "UV_PROJECT_ENVIRONMENT": str(repo / ".venv"), "VIRTUAL_ENV": None,
        }  # fmt: skip
        leg.step("uv add evaljig[lighteval]", repo, "uv", "add", "--quiet", *REQUIREMENTS, env=team_env)
        problems = lock_problems((repo / "uv.lock").read_text(encoding="utf-8"), [*private, repo])
        if problems:
            paths = "\n".join(problems)
            raise StepFailedError(f"uv: uv.lock is not portable, it names paths of this machine:\n{paths}")
        run = lambda *args: ["uv", "run", "--frozen", *args]  # noqa: E731
        freeze_cmd = ["uv", "pip", "freeze", "--python", str(repo / ".venv" / "bin" / "python")]
    started = time.perf_counter()
    freeze = subprocess.run(
        freeze_cmd, cwd=repo, env={k: v for k, v in {**os.environ, **team_env}.items() if v is not None},
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    leg.steps.append((f"{installer}: freeze", time.perf_counter() - started))
    if suite is not None:
        suite.file(installer, stack_of(freeze))
    leg.step("lighteval check", repo, *run("evaljig-config", "lighteval", "check"), env=team_env)
    if (repo / ".litellm_cache").exists():
        left = "`evaljig-config lighteval check` left .litellm_cache/ in the working directory"
        raise StepFailedError(f"{installer}: {left}")
    leg.step("evaljig init .", repo, *run("evaljig", "init", ".", *INIT_OPTIONS), env=team_env)
    backend = repo / "backend"
    leg.step("builder", backend, *run("python", BUILDER), env=team_env)
    other, why = suite.stands_in(installer, backend / FIXTURES) if suite is not None else ("", "")
    if other:
        leg.note(f"pytest -m lighteval: not run again: {why}")
    else:
        if why:
            leg.note(f"pytest -m lighteval: runs here: {why}")
        leg.step("pytest -m lighteval", backend, *run("python", *LEV_SUITE), env=team_env)
    return resolved_versions(freeze)
