"""Below the app: what httptools cannot parse is answered 400 by uvicorn itself and the gateway keeps serving.

Such a request never reaches the app, so it is not journaled (uvicorn's own handling: the gateway
subclasses none of uvicorn's protocol classes); a framing error in a body the app is already reading
is journaled once, as the client gone (499), since the app never answered it."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from typing import Any

import httpx
import pytest

from evaljig_gateway import Gateway

from .conftest import CHAT

#: Ten framings the HTTP parser refuses (with the method and path; unused now that they are not journaled).
MALFORMED = {
    "bad request line": (b"GARBAGE\r\n\r\n", "?", "?"),
    "bad method": (b"G@T /v1/models HTTP/1.1\r\nHost: x\r\n\r\n", "?", "?"),
    "bad version": (b"GET /v1/models HTTP/9.x\r\nHost: x\r\n\r\n", "GET", "/v1/models"),
    "header without colon": (b"GET /v1/models HTTP/1.1\r\nHost x\r\n\r\n", "GET", "/v1/models"),
    "NUL in a header": (b"GET /v1/models HTTP/1.1\r\nHost: x\x00y\r\n\r\n", "GET", "/v1/models"),
    "bad content-length": (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
        "POST",
        "/v1/chat/completions",
    ),
    "two content-lengths": (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
        "POST",
        "/v1/chat/completions",
    ),
    "content-length and chunked": (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"0\r\n\r\n",
        "POST",
        "/v1/chat/completions",
    ),
    "chunked not last": (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n",
        "POST",
        "/v1/chat/completions",
    ),
    "bad chunk size": (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n",
        "POST",
        "/v1/chat/completions",
    ),
}


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _error(answer: bytes, status: int) -> dict[str, Any]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 %d " % status), answer[:200]
    assert b"content-type: application/json" in head.lower()
    error: dict[str, Any] = json.loads(body)["error"]
    return error


def _wait_until(condition: Any) -> None:
    deadline = time.monotonic() + 30
    while not condition():  # a guard against hanging, not a timing check
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.005)


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_request_the_parser_refuses_is_a_400_and_the_gateway_keeps_serving(gateway: Gateway, case: str) -> None:
    raw, _, _ = MALFORMED[case]
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=30) as sock:
        sock.sendall(raw)
        answer = _read_all(sock)
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    # a complete head reached the app, which then saw the connection go: at most that is journaled (499)
    assert [c.status for c in gateway.calls()] in ([], [499])
    assert httpx.post(f"{gateway.base_url}/chat/completions", json=CHAT, timeout=30).status_code == 200


def test_bad_chunk_framing_in_a_body_the_app_is_reading_is_journaled_once(gateway: Gateway) -> None:
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=30) as sock:
        sock.sendall(head + b'5\r\n{"mod\r\n')
        _wait_until(lambda: gateway.app.in_flight == 1)  # the app is waiting for the rest of the body
        sock.sendall(b"not-a-chunk-size\r\n")
        _read_all(sock)
    _wait_until(lambda: gateway.app.in_flight == 0)
    _wait_until(lambda: gateway.calls())
    assert [(c.method, c.path, c.status) for c in gateway.calls()] == [("POST", "/v1/chat/completions", 499)]


def test_served_counts_what_the_journal_records_and_not_the_gateways_own_calls(gateway: Gateway) -> None:
    served = gateway.served
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        assert http.get("/_gateway/status").json()["served"] == served
        http.post("/_gateway/reset")
        http.get("/_gateway/calls")
        assert http.get("/v1/models").status_code == 200
        assert http.post("/v1/chat/completions", content=b"{").status_code == 400
        with socket.create_connection(("127.0.0.1", gateway.port), timeout=30) as sock:
            sock.sendall(b"GARBAGE\r\n\r\n")  # refused by uvicorn below the app: not a served call
            _read_all(sock)
        assert http.get("/_gateway/status").json()["served"] == served + 2
