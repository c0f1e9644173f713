"""Lazy lighteval imports: the service renders configs without lighteval; runners need it."""

from __future__ import annotations

import contextlib
import gc
import importlib
import importlib.util
import sys
from collections.abc import Iterator
from types import ModuleType

from evaljig_config._errors import LightEvalUnavailable
from evaljig_config._stack_bounds import LIGHTEVAL_EXTRA

INSTALL_HINT = (
    "lighteval is not installed in this environment. Install the stack evaljig is tested with (torch's CPU "
    "wheel comes from your configured index or find-links): pip install 'evaljig[lighteval]', or pip install "
    + " ".join(f"'{requirement}'" for requirement in LIGHTEVAL_EXTRA)
    + "; then `evaljig-config lighteval check` says whether it can run offline. In evaljig's own repository "
    "`make lighteval` builds this stack in its own venv."
)


def import_lighteval_module(name: str) -> ModuleType:
    module = sys.modules.get(name)
    if module is not None:
        return module
    try:
        with collector_paused():
            return importlib.import_module(name)
    except ImportError as exc:
        raise LightEvalUnavailable(f"{INSTALL_HINT}\n(import of {name} failed: {exc})") from exc


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while lighteval's stack is imported, its survivors frozen after.

    Importing lighteval's pipeline loads ~8,000 modules (torch, transformers, litellm, inspect_ai,
    scipy, ...) whose objects all live as long as the process; the collector's passes over that
    growing heap are wasted work. Measured, the same 8,158 modules: 21.7 s of CPU with it on, 15.9 s
    paused. ``gc.freeze`` then sets what exists apart, so the collections of the run itself skip it.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def lighteval_available() -> bool:
    """True when the real lighteval is importable (a namespace folder named lighteval is not it)."""
    spec = importlib.util.find_spec("lighteval")
    return spec is not None and spec.origin is not None
