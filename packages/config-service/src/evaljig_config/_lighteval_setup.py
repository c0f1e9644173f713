"""Everything lighteval 0.13 needs to run offline, in one place, and a check that a stack can.

lighteval is not written to run without a network, so every run (evaljig's own LEV matrix, a
team's tests, ``evaljig-config lighteval run``) goes through these:

- **no download at import**: lighteval's ``tiny_benchmarks`` task module fetches
  ``tinyBenchmarks.pkl`` from GitHub whenever its task registry loads; an empty file beside it
  stops that (the tiny benchmarks themselves are never used by a litellm run);
- **the offline environment**: :data:`evaljig_common.OFFLINE_ENV` plus an ``HF_HOME`` inside
  the run (see :func:`lighteval_run_env`);
- **cache isolation**: lighteval's sample cache and litellm's ``./.litellm_cache`` both live in
  the working directory, which is a fresh run directory every time (:func:`prepare_run_dir`).

:func:`check_lighteval_stack` imports every module a run reaches lazily (lighteval's pipeline
and task registry, litellm's caching and audio utilities, the ``transformers`` pieces lighteval
touches, ``soundfile`` when installed), so a stack with a hidden system dependency fails once,
right after it is built, with one line naming the package and the missing library, instead of
inside every run.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import re
import sys
import sysconfig
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evaljig_common import OFFLINE_ENV
from evaljig_config._errors import ConfigError
from evaljig_config._lighteval_import import collector_paused

#: The file lighteval's ``tiny_benchmarks`` task module downloads at import when it is missing.
TINY_BENCHMARKS = Path("tasks") / "tasks" / "tinyBenchmarks.pkl"

#: Modules a LEV run imports lazily, each with why: what the check imports, in this order.
STACK_MODULES: tuple[tuple[str, str], ...] = (
    ("litellm", "lighteval's litellm backend"),
    ("litellm.caching.caching", "litellm's disk cache, which lighteval turns on"),
    ("litellm.caching.disk_cache", "litellm's disk cache, which lighteval turns on"),
    ("litellm.litellm_core_utils.audio_utils.utils", "imported by litellm.main"),
    ("datasets", "lighteval's task data"),
    ("transformers.processing_utils", "lighteval's model loader, through its VLM model"),
    ("lighteval.main_endpoint", "the `lighteval endpoint` command"),
    ("lighteval.pipeline", "lighteval's Python API"),
    ("lighteval.models.endpoints.litellm_model", "lighteval's litellm backend"),
    ("lighteval.tasks.registry", "lighteval's task registry"),
    ("lighteval.tasks.tasks.tiny_benchmarks", "loaded with the task registry; downloads unless prepared"),
)
#: Installed only by some stacks, but then imported by ``transformers`` when present: checked if found.
OPTIONAL_MODULES: tuple[tuple[str, str], ...] = (("soundfile", "imported by transformers.audio_utils when installed"),)

NOT_INSTALLED = " is not installed"
_SHARED_LIBRARY = re.compile(r"\b(lib[\w.+-]*?\.(?:so|dylib|dll)(?:\.[\d.]+)?)\b")


def prepare_run_dir(run_dir: Path) -> Path:
    """A new, empty run directory: refusing a used one is what keeps caches from leaking."""
    run_dir = run_dir.resolve()
    if run_dir.exists() and any(run_dir.iterdir()):
        raise ConfigError(f"{run_dir}: run directory is not empty; every lighteval run needs a fresh one")
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir


def lighteval_run_env(run_dir: Path, api_key: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment for a run: offline, ``HF_HOME`` inside the run, the key as ``OPENAI_API_KEY``."""
    env = dict(os.environ if base is None else base)
    env.update(OFFLINE_ENV)
    env["HF_HOME"] = str(run_dir / "hf_home")
    env["OPENAI_API_KEY"] = api_key
    return env


def prepare_lighteval() -> Path | None:
    """Make the lighteval installed beside this interpreter importable offline; returns the placeholder.

    Creates an empty ``tinyBenchmarks.pkl`` beside lighteval's task modules unless one is
    there. Idempotent and cheap, so every runner calls it. ``None`` when no lighteval is
    installed here (a CLI run may use another environment's ``lighteval`` command, and the
    Python path says how to install it); :class:`~evaljig_config.ConfigError` naming the file
    when lighteval's folder is read-only.
    """
    try:
        spec = importlib.util.find_spec("lighteval")
    except ValueError:  # a module object without a spec stands in for lighteval in sys.modules
        return None
    if spec is None or spec.origin is None:
        return None
    placeholder = Path(spec.origin).parent / TINY_BENCHMARKS
    if not placeholder.parent.is_dir():  # a lighteval without the task module that downloads
        return None
    if not placeholder.exists():
        try:
            placeholder.touch()
        except OSError as exc:
            raise ConfigError(
                f"{placeholder}: cannot create lighteval's tinyBenchmarks placeholder ({exc.strerror or exc}); "
                "without it lighteval downloads the file at import: make lighteval's folder writable or create "
                "the empty file once"
            ) from exc
    return placeholder


@dataclass(frozen=True)
class StackProblem:
    """One module of :data:`STACK_MODULES` that failed to import, and the package to blame."""

    module: str
    why: str
    package: str
    error: str
    library: str | None

    def line(self, *, after_mismatch: bool = False) -> str:
        """One line: what failed, which package, which native library (when that is the cause), the fix.

        ``after_mismatch``: a version outside the tested range was reported first, and is the
        likely cause, so the line points there instead of at a reinstall.
        """
        if self.package.endswith(NOT_INSTALLED):
            return f"importing {self.module} ({self.why}): package {self.package}"
        if self.library:
            cause = f"package {self.package} cannot load the native library {self.library}"
            fix = (
                "install a wheel of it that bundles the library (a manylinux wheel) or the system library, "
                "then rebuild the stack"
            )
        else:
            cause = f"package {self.package} failed: {self.error}"
            fix = self._reinstall()
        if after_mismatch:
            fix = "fix the version reported above first (the likely cause), then run this check again"
        return f"importing {self.module} ({self.why}): {cause}; {fix}"

    def _reinstall(self) -> str:
        """The exact command that reinstalls the culprit, or where to look when no package owns it."""
        name, _, version = self.package.partition(" ")
        if not version:  # a module on PYTHONPATH or in the working directory, not an installed package
            return f"{name} is no installed package: fix or remove it from sys.path"
        return f"fix: pip install --force-reinstall '{name}=={version}'"


def check_lighteval_stack(
    modules: Sequence[tuple[str, str]] = STACK_MODULES,
    optional: Sequence[tuple[str, str]] = OPTIONAL_MODULES,
) -> list[StackProblem]:
    """Import every module a LEV run reaches lazily; the problems found, in order (empty: sound).

    Call it in a fresh process with :data:`~evaljig_common.OFFLINE_ENV` set (``evaljig-config
    lighteval check`` does). A broken package is reported once, for the first module that reaches
    it, however many others import it too. The lighteval placeholder is created first, so the
    check itself never downloads.
    """
    problems: list[StackProblem] = []
    if importlib.util.find_spec("lighteval") is not None:
        prepare_lighteval()
    present_optional = [(name, why) for name, why in optional if importlib.util.find_spec(name) is not None]
    with collector_paused():
        for name, why in [*present_optional, *modules]:
            try:
                importlib.import_module(name)
            except Exception as exc:  # any failure at import is the finding
                problem = _problem(name, why, exc)
                # a failed import is not cached: whatever imports the broken package fails the same way again
                if not any(
                    (p.package, p.library or p.error) == (problem.package, problem.library or problem.error)
                    for p in problems
                ):
                    problems.append(problem)
    return problems


def _problem(module: str, why: str, exc: BaseException) -> StackProblem:
    message = " ".join(f"{type(exc).__name__}: {exc}".split())
    library = _missing_library(exc)
    return StackProblem(module, why, _culprit(exc, module), message[:300], library)


def _missing_library(exc: BaseException) -> str | None:
    """The shared library an ``OSError`` (or what caused it) could not load, if that is the cause."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError):
            found = _SHARED_LIBRARY.search(str(seen))
            if found:
                return found.group(1)
        seen = seen.__cause__ or seen.__context__
    return None


def _culprit(exc: BaseException, module: str) -> str:
    """Who raised: the innermost frame outside the standard library, as ``distribution version``.

    Code that no installed distribution owns (a module on ``PYTHONPATH``) is named by its
    top-level module.
    """
    owners = importlib.metadata.packages_distributions()
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename.startswith("<"):  # frozen importlib, exec'd strings
            continue
        top = _top_level(Path(frame.filename))
        if top is not None:
            return _with_version(owners[top][0]) if top in owners else top
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return f"{exc.name}{NOT_INSTALLED}"
    return module.partition(".")[0]


def _top_level(path: Path) -> str | None:
    """The top-level import name of a file under one of ``sys.path``'s folders, the stdlib's and ours excluded."""
    path = path.resolve()
    stdlib = {Path(sysconfig.get_paths()[key]).resolve() for key in ("stdlib", "platstdlib")}
    installed = {"site-packages", "dist-packages"} & set(path.parts)
    if path == Path(__file__) or (not installed and any(path.is_relative_to(folder) for folder in stdlib)):
        return None
    # the most specific folder first: the working directory on sys.path may contain the others
    for base in sorted((Path(entry).resolve() for entry in sys.path if entry), key=lambda p: -len(p.parts)):
        if base not in stdlib and path.is_relative_to(base) and path != base:
            return path.relative_to(base).parts[0].removesuffix(".py")
    return None


def _with_version(distribution: str) -> str:
    try:
        return f"{distribution} {importlib.metadata.version(distribution)}"
    except importlib.metadata.PackageNotFoundError:  # listed by packages_distributions, yet gone
        return distribution
