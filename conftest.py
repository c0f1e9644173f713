"""Workspace-wide pytest wiring: the shared ``golden`` snapshot fixture, and order independence."""

from __future__ import annotations

from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from testkit.golden import Golden

#: testkit.isolation closes event loops tests leave behind and wraps ``pytester`` (so pytester must load first)
pytest_plugins = ("pytester", "testkit.isolation")


@pytest.fixture
def golden(snapshot: SnapshotAssertion) -> Golden:
    """Readable golden snapshot stored under ``golden/<package>/<test_module>/``."""
    return Golden(snapshot)


@pytest.hookimpl(tryfirst=True)
def pytest_assertrepr_compare(config: pytest.Config, op: str, left: Any, right: Any) -> list[str] | None:
    """Show syrupy's diff for ``assert golden == value`` failures."""
    if isinstance(left, Golden) and left.last is not None:
        return [f"golden {op} received", *left.last.get_assert_diff()]
    return None
