"""The lighteval stack venv of ``nox -s lighteval`` and ``nox -s regen``: uv with the machine's pip
settings made explicit, built atomically, reused while every input is unchanged.

uv does not read pip's configuration, yet on these machines pip's find-links is what offers a
CPU torch; so the settings are read (``pip config list`` plus ``PIP_*``) and passed to uv as
flags. ``EVALJIG_STACK_INDEX_URL`` adds indexes for the stack only (CI sets the PyTorch CPU
index there). A build happens in a temporary sibling folder that is renamed into place only
once complete, so an interrupted or failed install is never reused. lighteval and torch never
enter uv.lock. Stdlib only, and nox is only ever handed in as a session: the noxfile imports
this from the ``.tools`` venv and the tests import it from the workspace venv.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

#: pip settings that choose where packages come from, and their ``PIP_*`` variables.
PIP_KEYS = {"index-url": "PIP_INDEX_URL", "extra-index-url": "PIP_EXTRA_INDEX_URL", "find-links": "PIP_FIND_LINKS"}
#: ``pip config list`` sections, weakest first (``:env:`` lines mirror ``PIP_*`` variables).
SECTION_RANK = {"global": 0, "install": 1, ":env:": 2}
STACK_INDEX_ENV = "EVALJIG_STACK_INDEX_URL"
#: ``newest``: resolve the stack to the newest releases its bounds admit, with no constraints file
#: (the nightly workflow), so a breaking upstream release is seen the night it ships.
RESOLUTION_ENV = "EVALJIG_STACK_RESOLUTION"
PARTIAL = ".partial-"

ROOT = Path(__file__).resolve().parent.parent
#: The stack's venv, shared by the ``lighteval`` and ``regen`` sessions.
VENV = ROOT / ".nox" / "lighteval-stack"
REQUIREMENTS = ROOT / "ci" / "lighteval-requirements.txt"
CONSTRAINTS = ROOT / "ci" / "lighteval-constraints.txt"
#: Workspace packages, installed editable so warm runs see source edits.
PACKAGES = (
    "packages/common",
    "packages/capability-corpus",
    "packages/gateway-stub",
    "packages/config-service",
    "packages/fixture-builder",
    "packages/reporter",
    "packages/review",
)
#: Bytecode at install time, as pip does: with PYTHONDONTWRITEBYTECODE set (as on these machines)
#: every lighteval process would otherwise recompile torch, transformers and lighteval on import.
INSTALL_FLAGS = ("--compile-bytecode",)
#: Run in the new stack before it is kept: prepares lighteval for offline runs (its empty
#: tinyBenchmarks.pkl) and imports every module a LEV run reaches; a failure discards the stack.
SELF_CHECK = ("lighteval", "check")


class _Virtualenv(Protocol):
    location: str


class Session(Protocol):
    """What the stack needs of a ``nox.Session``."""

    @property
    def virtualenv(self) -> _Virtualenv: ...

    def run(self, *args: str, **kwargs: Any) -> Any: ...

    def log(self, *args: Any, **kwargs: Any) -> None: ...

    def create_tmp(self) -> str: ...


def pip_config_text(python: str = sys.executable) -> str:
    """``pip config list`` of ``python`` (empty when that interpreter has no pip)."""
    try:
        done = subprocess.run(
            [python, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout if done.returncode == 0 else ""


def pip_settings(config_text: str, env: Mapping[str, str]) -> dict[str, list[str]]:
    """Where pip would look for packages: ``{key: [values]}`` for the keys of :data:`PIP_KEYS`.

    A ``PIP_*`` variable beats ``pip config list``; within it ``:env:`` beats ``install.``
    beats ``global.``. Values are whitespace-separated lists, as pip reads them.
    """
    best: dict[str, tuple[int, str]] = {}
    for line in config_text.splitlines():
        name, sep, raw = line.partition("=")
        section, _, key = name.strip().rpartition(".")
        if not sep or key not in PIP_KEYS or section not in SECTION_RANK:
            continue
        rank = SECTION_RANK[section]
        if key not in best or rank >= best[key][0]:
            best[key] = (rank, raw.strip().strip("'\""))
    for key, var in PIP_KEYS.items():
        if env.get(var):
            best[key] = (len(SECTION_RANK), env[var])
    return {key: value.split() for key, (_, value) in sorted(best.items()) if value.split()}


def uv_source_args(settings: Mapping[str, list[str]], env: Mapping[str, str]) -> list[str]:
    """uv flags for the same sources, plus ``EVALJIG_STACK_INDEX_URL``'s indexes.

    ``unsafe-best-match`` lets the best version win across every source, so ``torch==X`` is
    satisfied by ``X+cpu`` from find-links or a CPU index rather than by the CUDA build on
    the default index (``X+cpu`` sorts above ``X``).
    """
    args: list[str] = []
    for url in settings.get("index-url", [])[:1]:
        args += ["--index-url", url]
    for url in [*settings.get("extra-index-url", []), *env.get(STACK_INDEX_ENV, "").split()]:
        args += ["--extra-index-url", url]
    for link in settings.get("find-links", []):
        args += ["--find-links", link]
    return [*args, "--index-strategy", "unsafe-best-match"]


def machine_sources(env: Mapping[str, str] = os.environ) -> list[str]:
    """The uv flags this machine's pip configuration and ``env`` give (``python ci/lighteval_stack.py uv-args``)."""
    return uv_source_args(pip_settings(pip_config_text(), env), env)


def digest(files: Iterable[Path], facts: Iterable[str]) -> str:
    """A short digest of every input file and fact (interpreter, sources): any change rebuilds."""
    h = hashlib.sha256()
    for path in files:
        h.update(path.read_bytes())
        h.update(b"\0")
    for fact in facts:
        h.update(fact.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def is_current(target: Path, stamp: str) -> bool:
    return (target / stamp).is_file()


def build_atomically(target: Path, stamp: str, build: Callable[[Path], None]) -> bool:
    """Build ``target`` unless it holds ``stamp``; returns whether it built.

    ``build`` fills an empty sibling folder; the stamp is written last and the folder renamed
    into place only then. A failure or interrupt (exception, SIGINT) removes the partial
    folder; one left by a kill is swept on the next build and never looked at.
    """
    if is_current(target, stamp):
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    for leftover in target.parent.glob(f"{target.name}{PARTIAL}*"):
        shutil.rmtree(leftover, ignore_errors=True)
    partial = Path(tempfile.mkdtemp(prefix=f"{target.name}{PARTIAL}", dir=target.parent))
    try:
        partial.chmod(0o755)  # mkdtemp's 0700 would make the venv private to its builder
        build(partial)
        (partial / stamp).write_text("complete\n")
        shutil.rmtree(target, ignore_errors=True)
        partial.replace(target)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return True


def compatible_constraints(locked: str, stack_pins: str) -> str:
    """The ``uv export`` constraints minus every package the stack's own constraints pin."""
    pinned = {_name(line) for line in stack_pins.splitlines() if "==" in line and not line.startswith("#")}
    keep = [
        line
        for line in locked.splitlines()
        if line and not line.startswith(("#", " ", "-")) and _name(line) not in pinned
    ]
    return "\n".join(keep) + "\n"


def _name(requirement: str) -> str:
    """PEP 503 normalised project name of a ``name==version ; marker`` line."""
    name = requirement.split("==")[0].split(";")[0].split("[")[0].strip().lower()
    return name.replace("_", "-").replace(".", "-")


def resolution(env: Mapping[str, str]) -> str:
    """``pinned`` (the constraints file, the default) or ``newest`` (``EVALJIG_STACK_RESOLUTION``)."""
    value = env.get(RESOLUTION_ENV, "") or "pinned"
    if value not in ("pinned", "newest"):
        raise SystemExit(f"{RESOLUTION_ENV}={value!r}: use 'pinned' (the default) or 'newest'")
    return value


def stack_env(bin_dir: Path, env: Mapping[str, str], outer: Mapping[str, str] = os.environ) -> dict[str, str]:
    """``env`` with the stack's ``bin/`` first on ``outer``'s PATH, so ``lighteval`` and our CLIs resolve to it."""
    return {
        **env,
        "PATH": os.pathsep.join([str(bin_dir), outer.get("PATH", "")]),
        "VIRTUAL_ENV": str(bin_dir.parent),
    }


def ensure(
    session: Session,
    test_requirements: Sequence[str],
    *,
    target: Path = VENV,
    sources: Sequence[str] | None = None,
) -> Path:
    """The stack venv at ``target``, built unless current; returns its ``bin/``.

    Built on the interpreter nox resolved for ``session`` (the same as every other session's),
    with uv and this machine's pip sources (``sources``, default :func:`machine_sources`), so a
    CPU torch is picked where one is offered. The stamp is a digest of every input file, the
    interpreter, the sources, the install flags and ``test_requirements``: any change rebuilds
    from scratch (see :func:`build_atomically`).
    """
    python = str(Path(session.virtualenv.location) / "bin" / "python")
    interpreter = str(
        session.run(
            python, "-c", "import sys; print(sys.version.split()[0], sys._base_executable)", silent=True, external=True
        )
    ).strip()  # fmt: skip
    sources = machine_sources() if sources is None else list(sources)
    newest = resolution(os.environ) == "newest"
    inputs = [REQUIREMENTS, CONSTRAINTS, ROOT / "uv.lock", *(ROOT / p / "pyproject.toml" for p in PACKAGES)]
    facts = [interpreter, *sources, *INSTALL_FLAGS, *test_requirements, f"resolution={resolution(os.environ)}"]
    inputs_digest = digest(inputs, facts)
    stamp = f".evaljig-stack-{inputs_digest}"
    where = target.relative_to(ROOT) if target.is_relative_to(ROOT) else target
    if is_current(target, stamp):
        session.log(f"lighteval stack is current ({where}, Python {interpreter.split()[0]}, inputs {inputs_digest})")
        return target / "bin"
    pinned = "the newest releases the bounds admit, no constraints" if newest else CONSTRAINTS.name
    session.log(f"building the lighteval stack into {where} with uv (Python {interpreter}; {pinned})")
    session.log(f"package sources: {shlex.join(sources)}")
    constraints = Path(session.create_tmp()) / "constraints.txt"
    session.run(
        "uv", "export", "--locked", "--all-packages", "--group=dev", "--no-emit-workspace", "--no-hashes",
        "--quiet", "--output-file", str(constraints), external=True,
    )  # fmt: skip
    compatible = constraints.with_name("constraints-compatible.txt")
    compatible.write_text(compatible_constraints(constraints.read_text(), CONSTRAINTS.read_text()))

    def build(venv: Path) -> None:
        venv_python = str(venv / "bin" / "python")
        session.run("uv", "venv", "--quiet", "--relocatable", "--python", python, str(venv), external=True)
        session.run(
            "uv", "pip", "install", "--python", venv_python, *sources, *INSTALL_FLAGS,
            "-r", str(REQUIREMENTS), *([] if newest else ["-c", str(CONSTRAINTS), "-c", str(compatible)]),
            *test_requirements,
            *(arg for package in PACKAGES for arg in ("-e", package)),
            external=True,
        )  # fmt: skip
        session.run(str(venv / "bin" / "evaljig-config"), *SELF_CHECK, external=True)

    build_atomically(target, stamp, build)
    return target / "bin"


def main(argv: list[str]) -> int:
    """``python ci/lighteval_stack.py uv-args``: print the uv flags this machine's pip settings give."""
    if argv != ["uv-args"]:
        print("usage: lighteval_stack.py uv-args", file=sys.stderr)
        return 2
    print(shlex.join(machine_sources()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
