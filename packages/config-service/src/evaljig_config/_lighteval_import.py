"""Lazy lighteval imports: the service renders configs without lighteval; runners need it."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from evaljig_config._errors import LightEvalUnavailable

INSTALL_HINT = (
    "lighteval is not installed in this environment. Run the LEV matrix with `make lighteval` "
    "(or `nox -s lighteval`), which installs the pinned stack in its own venv, or install it yourself: "
    "pip install torch==2.13.0 'lighteval[litellm]==0.13.0' 'huggingface_hub<2' 'xxhash<4'"
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
