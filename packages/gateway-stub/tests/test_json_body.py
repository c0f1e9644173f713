"""Request bodies: orjson parses them; a body that is not JSON is one journaled 400 ``invalid_json``."""

from __future__ import annotations

import httpx
import pytest

from evaljig_gateway import Gateway

#: A body past the 16 KiB the event loop parses itself: it is parsed in a worker thread.
LARGE_BODY_BYTES = 256 * 1024


def test_the_gateway_refuses_a_large_malformed_body_with_400(gateway: Gateway) -> None:
    raw = b'{"model": "m", "messages": ' + b"[" * 10 + b"x" * (LARGE_BODY_BYTES + 1)
    with httpx.Client(base_url=gateway.url) as http:
        reply = http.post("/v1/chat/completions", content=raw, headers={"content-type": "application/json"})
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == "invalid_json"
    assert [c.status for c in gateway.calls()] == [400]


@pytest.mark.parametrize("raw", [b"{" + b"x" * (3 * 1024 * 1024), b"[" * 2000 + b"]" * 2000, b'{"model": "m"'])
def test_broken_or_too_deep_bodies_are_a_400_invalid_json(gateway: Gateway, raw: bytes) -> None:
    with httpx.Client(base_url=gateway.url) as http:
        reply = http.post("/v1/chat/completions", content=raw, headers={"content-type": "application/json"})
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == "invalid_json"
