"""Workspace-wide pytest wiring: isolation and order independence.

The ``golden`` fixture and the orphaned-golden check come from evaljig-review's pytest plugin
(installed into the workspace venv); evaljig's layout for it (``golden/<package>/<module>/``) is
set in pyproject.toml (``evaljig_golden_layout = "packages"``).
"""

from __future__ import annotations

#: testkit.isolation closes event loops tests leave behind and wraps ``pytester`` (so pytester must load first)
pytest_plugins = ("pytester", "testkit.isolation")
