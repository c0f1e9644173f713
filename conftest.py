"""Workspace-wide pytest wiring: isolation, order independence and repeatable property tests.

The ``golden`` fixture and the orphaned-golden check come from evaljig-review's pytest plugin
(installed into the workspace venv); evaljig's layout for it (``golden/<package>/<module>/``) is
set in pyproject.toml (``evaljig_golden_layout = "packages"``).
"""

from __future__ import annotations

import importlib.util

#: testkit.isolation closes event loops tests leave behind and wraps ``pytester`` (so pytester must load first)
pytest_plugins = ("pytester", "testkit.isolation")

if importlib.util.find_spec("hypothesis") is not None:  # the dev group has it; the wheels' and the stack's venvs not
    from hypothesis import settings

    # Property tests draw the same examples on every run, machine and xdist worker: a red CI is a change,
    # never a new seed's luck. Fresh examples are one option away (docs/development.md#property-tests):
    #   pytest --hypothesis-profile=explore packages/gateway-stub
    settings.register_profile("evaljig", derandomize=True, database=None, print_blob=True)
    settings.register_profile("explore", derandomize=False, print_blob=True)
    settings.load_profile("evaljig")
