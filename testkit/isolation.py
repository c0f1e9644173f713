"""A pytest plugin that keeps tests independent of their order (the workspace runs under pytest-randomly).

Loaded by the root ``conftest.py``; an inner pytester session can load it with ``-p testkit.isolation``.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import sys
import warnings
from collections.abc import Iterator

import pytest

#: Variables nox and CI set for the outer session; an inner session seeing them would report into the real run.
#: ``PYTEST_XDIST_*``: an inner session run from one of our workers is not a worker itself.
OUTER_SESSION_ENV = ("EVALJIG_", "GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT", "GITHUB_STEP_SUMMARY", "PYTEST_XDIST_")


@pytest.fixture(autouse=True)
def _close_the_current_event_loop() -> Iterator[None]:
    """Close the event loop a test leaves set as the thread's current one, in that test's teardown.

    pydantic-evals' ``evaluate_sync`` (and ``asyncio.get_event_loop()`` on 3.11) set a loop and never
    close it. Whichever later test replaces it (``asyncio.run`` does) then gets its unclosed-loop and
    unclosed-socket ``ResourceWarning``s, failures under the ``error`` filter that depend on test order.
    """
    yield
    policy = asyncio.get_event_loop_policy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: "there is no current event loop"
        try:
            loop = policy.get_event_loop()
        except RuntimeError:  # none set since the last set_event_loop(None): nothing leaked
            return
    if not loop.is_running():
        loop.close()
    policy.set_event_loop(None)


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's ``pytester``, with inner sessions isolated from the outer one.

    Inner sessions run their tests in file order (``-p no:randomly``: their assertions describe one
    session, and the outer seed must not reshuffle it), without hypothesis's plugin (no inner session
    uses it, a team's repository has none, and loading it costs every inner pytest process, xdist
    workers included, 0.1-0.5 s of CPU), and never see the outer session's ``EVALJIG_*`` variables.
    ``PYTEST_ADDOPTS`` is set after pytester has cleared it, so the inner sessions, in process or in a
    subprocess (xdist workers too), all read it.
    """
    for name in [n for n in os.environ if n.startswith(OUTER_SESSION_ENV)]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:randomly -p no:hypothesispytest")
    return pytester


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Close the HTTP clients litellm keeps in its process-wide cache, before the interpreter exits.

    litellm caches one OpenAI client per base URL and key and never closes it, so every session that
    called litellm ended with an unclosed-socket ``ResourceWarning`` at exit.
    """
    litellm = sys.modules.get("litellm")
    cache = getattr(litellm, "in_memory_llm_clients_cache", None)
    clients = getattr(cache, "cache_dict", None)
    if not isinstance(clients, dict):
        return
    for client in list(clients.values()):
        close = getattr(client, "close", None)
        if callable(close) and not inspect.iscoroutinefunction(close):
            close()
    cache.flush_cache()  # type: ignore[union-attr]
