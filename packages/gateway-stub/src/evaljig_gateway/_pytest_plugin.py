"""pytest plugin: the ``gateway`` fixture (one server per xdist worker, journal reset per test)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from evaljig_gateway._server import Gateway


@pytest.fixture(scope="session")
def gateway_server() -> Iterator[Gateway]:
    """The worker's gateway; prefer ``gateway``, which is reset for every test."""
    from evaljig_gateway._server import Gateway

    with Gateway() as gw:
        yield gw


@pytest.fixture
def gateway(gateway_server: Gateway) -> Gateway:
    """A live gateway on 127.0.0.1 with an empty journal, fresh attempt counts and no answer key."""
    gateway_server.reset()
    gateway_server.set_answers(None)
    return gateway_server
