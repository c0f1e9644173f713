"""Workspace-wide pytest wiring: the ``golden`` snapshot fixture, the orphaned-golden check, order independence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from testkit.golden import Golden, golden_dir_for
from testkit.orphans import GoldenOrphans

ROOT = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    """Golden folders of deleted test modules fail the run; ``--snapshot-update`` deletes them (not in workers)."""
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(GoldenOrphans(ROOT), "evaljig-golden-orphans")


#: testkit.isolation closes event loops tests leave behind and wraps ``pytester`` (so pytester must load first)
pytest_plugins = ("pytester", "testkit.isolation")


@pytest.fixture
def golden(request: pytest.FixtureRequest, snapshot: SnapshotAssertion) -> Golden:
    """Readable golden snapshot stored under ``golden/<package>/<test_module>/``."""
    golden_dir_for(request.path)  # a test outside packages/<pkg>/ gets the reason, not a stray folder
    return Golden(snapshot)


@pytest.hookimpl(tryfirst=True)
def pytest_assertrepr_compare(config: pytest.Config, op: str, left: Any, right: Any) -> list[str] | None:
    """Show syrupy's diff for ``assert golden == value`` failures."""
    if isinstance(left, Golden) and left.last is not None:
        return [f"golden {op} received", *left.last.get_assert_diff()]
    return None
