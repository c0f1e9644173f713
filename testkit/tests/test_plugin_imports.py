"""evaljig's pytest plugins load into every session of every repository they are installed in: they stay light.

Each ``pytest11`` plugin module imports its package's ``__init__``; the packages that register one
import their public names on first use (``evaljig_common.lazy_exports``). Measured on 2 cores, a
pytest start with evaljig's five plugins took 0.87 s of CPU against 0.51 s without them; with the
lazy packages, 0.54 s.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

LAZY_PACKAGES = ("evaljig_cases", "evaljig_fixtures", "evaljig_gateway", "evaljig_report")
#: What no plugin may load at import: the server stack, HTTP clients, models, report writers.
HEAVY = (
    "uvicorn",
    "httpx",
    "pydantic",
    "vcr",
    "evaljig_gateway._server",
    "evaljig_gateway._app",
    "evaljig_cases._case_record",
    "evaljig_report._compare",
    "evaljig_config",
)


def evaljig_plugins() -> list[str]:
    return sorted(e.value for e in entry_points(group="pytest11") if e.value.startswith("evaljig_"))


def test_every_evaljig_plugin_loads_without_the_heavy_modules() -> None:
    plugins = evaljig_plugins()
    assert len(plugins) >= 5, plugins
    code = f"import json, sys, pytest; import {', '.join(plugins)}; print(json.dumps(sorted(sys.modules)))"
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True).stdout))
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_public_name_of_a_lazy_package_resolves(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"
