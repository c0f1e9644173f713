"""Lazy lighteval imports: the service renders configs without lighteval; runners need it."""

from __future__ import annotations

import importlib
import importlib.util
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
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise LightEvalUnavailable(f"{INSTALL_HINT}\n(import of {name} failed: {exc})") from exc


def lighteval_available() -> bool:
    """True when the real lighteval is importable (a namespace folder named lighteval is not it)."""
    spec = importlib.util.find_spec("lighteval")
    return spec is not None and spec.origin is not None
