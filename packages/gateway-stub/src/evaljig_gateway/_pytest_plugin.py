"""pytest plugin: the ``gateway`` fixture (one server per xdist worker, journal reset per test).

A test marked ``@pytest.mark.evaljig_cassette("cassettes/x.yaml")`` gets a gateway replaying
that cassette instead: one server per cassette (and options) per worker, its journal reset and
its cursors rewound for every test. The path is relative to the test file's folder (where
pytest-recording keeps its cassettes too), so a test and its cassette move together.

A test using ``gateway`` that fails after a cassette miss fails as
:class:`~evaljig_gateway.CassetteMiss` (raised from the original error): a client seldom shows
the 404's text (lighteval turns it into an empty answer and a retry error), so the gateway's
explanation would otherwise be nowhere in the failure.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from evaljig_gateway._server import Gateway
    from evaljig_gateway._tape import Replay

MARKER = "evaljig_cassette"
_OPTIONS = ("on_miss", "ignore", "upstream", "api_key_env")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(path, *, on_miss='error', ignore=None, upstream=None, api_key_env=None): the `gateway` "
        "fixture replays this cassette (path relative to the test file's folder); see docs/gateway.md",
    )


@pytest.fixture(scope="session")
def gateway_server() -> Iterator[Gateway]:
    """The worker's gateway; prefer ``gateway``, which is reset for every test."""
    from evaljig_gateway._server import Gateway

    with Gateway() as gw:
        yield gw


@pytest.fixture(scope="session")
def evaljig_cassette_gateways() -> Iterator[dict[Replay, Gateway]]:
    """The worker's replaying gateways, by their ``Replay`` (cassette and options); stopped (and, with
    ``on_miss="record"``, written) at the end of the session."""
    gateways: dict[Replay, Gateway] = {}
    yield gateways
    for gw in gateways.values():
        gw.stop()


@pytest.fixture
def gateway(request: pytest.FixtureRequest) -> Gateway:
    """A live gateway on 127.0.0.1 with an empty journal, fresh attempt counts and no answer key,
    or, for a test marked ``evaljig_cassette``, replaying that cassette from its first recordings."""
    marker = request.node.get_closest_marker(MARKER)
    if marker is not None:
        return _replaying(request, marker)
    server: Gateway = request.getfixturevalue("gateway_server")
    server.reset()
    server.set_answers(None)
    return server


def _replaying(request: pytest.FixtureRequest, marker: pytest.Mark) -> Gateway:
    """The worker's gateway replaying the marker's cassette with its options, reset (its journal emptied and its
    cursors rewound to each request's first recording)."""
    from evaljig_gateway._server import Gateway
    from evaljig_gateway._tape import Replay

    if len(marker.args) != 1 or not isinstance(marker.args[0], str | Path):
        raise pytest.UsageError(f"@pytest.mark.{MARKER} takes one cassette path, got {marker.args!r}")
    unknown = sorted(set(marker.kwargs) - set(_OPTIONS))
    if unknown:
        raise pytest.UsageError(f"@pytest.mark.{MARKER}: unknown option(s) {unknown}; known: {list(_OPTIONS)}")
    ignore = marker.kwargs.get("ignore")
    replay = Replay(
        (request.path.parent / marker.args[0]).resolve(),
        on_miss=marker.kwargs.get("on_miss", "error"),
        upstream=marker.kwargs.get("upstream"),
        api_key_env=marker.kwargs.get("api_key_env"),
        ignore_fields=tuple(ignore) if ignore is not None else None,
    )
    gateways: dict[Replay, Gateway] = request.getfixturevalue("evaljig_cassette_gateways")
    if replay not in gateways:
        gateways[replay] = Gateway(tape=replay).start()
    gateways[replay].reset()
    return gateways[replay]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """A failure after a cassette miss becomes :class:`CassetteMiss`: the miss first, the original error its cause."""
    try:
        return (yield)
    except (Exception, pytest.fail.Exception) as exc:
        from evaljig_gateway._miss import CassetteMiss, first_miss

        funcargs = getattr(item, "funcargs", {})
        gw = funcargs.get("gateway") if isinstance(funcargs, dict) else None
        found = first_miss(gw.calls()) if gw is not None and not isinstance(exc, CassetteMiss) else None
        if found is None:
            raise
        tape = gw.tape if gw is not None else None
        cassette = str(tape.path) if tape is not None else None
        raise CassetteMiss(found[0], misses=found[1], cassette=cassette) from exc
