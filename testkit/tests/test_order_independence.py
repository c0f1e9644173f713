"""The workspace's order-independence plugin (``testkit.isolation``), exercised in inner pytest sessions.

An inner session sees neither the outer session's ``EVALJIG_*`` variables nor pytest-randomly,
and an event loop one test leaves open is closed in that test's teardown instead of failing
whichever test happens to run next.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

LEAKY_SUITE = """
import asyncio

def test_a_leaves_a_loop_set_and_open():
    asyncio.set_event_loop(asyncio.new_event_loop())

def test_b_replaces_it():
    assert asyncio.run(asyncio.sleep(0, result=1)) == 1

def test_c_collects_garbage():
    import gc
    gc.collect()
"""

ENV_SUITE = """
import os

def test_the_outer_session_does_not_leak_in(request):
    assert not [n for n in os.environ if n.startswith("EVALJIG_")]
    assert not request.config.pluginmanager.has_plugin("randomly")
"""

INNER = ("-p", "no:cacheprovider", "-p", "no:evaljig_report", "-W", "error")  # no:randomly: the pytester fixture


def test_a_leaked_event_loop_is_closed_by_the_test_that_left_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_leaky=LEAKY_SUITE)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # testkit lives at the repository root
    without = pytester.runpytest_subprocess(*INNER)
    without.assert_outcomes(passed=2, failed=1)  # the unclosed loop fails a later, innocent test
    assert "unclosed event loop" in without.stdout.str()
    with_plugin = pytester.runpytest_subprocess(*INNER, "-p", "testkit.isolation")
    with_plugin.assert_outcomes(passed=3)


@pytest.fixture
def nox_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``nox -s tests`` sets for the outer session, set before ``pytester`` starts."""
    monkeypatch.setenv("EVALJIG_RUN", "outer")
    monkeypatch.setenv("EVALJIG_ALL_TESTS", "1")


def test_inner_sessions_are_isolated_from_the_outer_one(nox_env: None, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_env=ENV_SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:evaljig_report")
    result.assert_outcomes(passed=1)


def test_the_test_sessions_shuffle_with_a_printed_seed(pytester: pytest.Pytester) -> None:
    """pytest-randomly is in the dev group (``nox -s tests`` installs it) and prints the seed to replay."""
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["dependency-groups"]["dev"]
    assert any(isinstance(r, str) and r.startswith("pytest-randomly") for r in dev)  # dev also has {include-group}
    assert 'name = "pytest-randomly"' in (ROOT / "uv.lock").read_text(encoding="utf-8")
    pytest.importorskip("pytest_randomly")  # absent only in `nox -s package`'s wheel-test venv
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "randomly", "--randomly-seed=4242")  # over the fixture's no:randomly
    result.stdout.fnmatch_lines(["Using --randomly-seed=4242"])
    result.assert_outcomes(passed=1)
