"""Header count and size limits: a clear 431 while the head is parsed, journaled, and the server keeps serving."""

from __future__ import annotations

import contextlib
import json
import socket

import httpx
import pytest

from evaljig_gateway import Gateway, Limits

from .conftest import CHAT


def _exchange(port: int, head: bytes) -> bytes:
    """Send a raw request head (no body) and read until the server closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # refused mid-send: the answer is kept
            sock.sendall(head)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _request(headers: list[tuple[str, str]], path: str = "/v1/models") -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers), "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ([(f"x-h{i}", "v") for i in range(150)], "more than 100 request headers"),
        ([("x-big", "v" * 20_000)], "over 16384 bytes"),
        ([(f"x-h{i}", "v" * 400) for i in range(60)], "over 16384 bytes"),
        ([("x-huge", "v" * 3_000_000)], "over 16384 bytes"),  # refused while still arriving, never buffered
    ],
)
def test_too_many_or_too_large_headers_are_a_431(gateway: Gateway, headers: list[tuple[str, str]], reason: str) -> None:
    answer = _exchange(gateway.port, _request(headers))
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 ")
    error = json.loads(body)["error"]
    assert reason in error["message"]
    assert error["code"] == "request_header_fields_too_large"
    assert [(c.method, c.path, c.status) for c in gateway.calls()] == [("GET", "/v1/models", 431)]
    assert httpx.post(f"{gateway.base_url}/chat/completions", json=CHAT).status_code == 200


def test_a_long_url_counts_towards_the_header_bytes(gateway: Gateway) -> None:
    answer = _exchange(gateway.port, _request([], path="/v1/models/" + "m" * 20_000))
    assert answer.startswith(b"HTTP/1.1 431 ")


def test_header_limits_are_configurable_and_ordinary_requests_pass() -> None:
    with Gateway(limits=Limits(max_header_count=5, max_header_bytes=400)) as gw:
        assert _exchange(gw.port, _request([("a", "1"), ("b", "2")])).startswith(b"HTTP/1.1 200 ")
        assert _exchange(gw.port, _request([(f"x{i}", "1") for i in range(5)])).startswith(b"HTTP/1.1 431 ")
        assert _exchange(gw.port, _request([("a", "v" * 400)])).startswith(b"HTTP/1.1 431 ")
