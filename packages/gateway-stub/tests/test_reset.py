"""A reset between a request's arrival and its answer changes nothing about the answer.

The pytest fixture resets the gateway before every test, so with xdist and clients that give
up late a request routinely arrives before a reset and finishes after it. It is left out of
the new journal and attempt counts (see test_journal), and it must still get the answer its
model gives: it used to be answered 500 "fails call 0" even for a model that always succeeds.
"""

from __future__ import annotations

import json
import socket
import threading
import time

import httpx
import pytest

from evaljig_gateway import Gateway

from .conftest import CHAT


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _status_line(sock: socket.socket) -> bytes:
    received = b""
    while b"\r\n" not in received:
        data = sock.recv(4096)
        if not data:
            break
        received += data
    return received.split(b"\r\n", 1)[0]


@pytest.mark.parametrize(
    ("model", "status"),
    [
        ("gpt-stub", 200),
        ("fail-once-x", 200),  # not counted: as a call past its failures
        ("always-fail-x", 500),  # every call fails, this one too
        ("rate-limit-x", 429),
    ],
)
def test_a_request_in_flight_across_a_reset_gets_its_models_answer(gateway: Gateway, model: str, status: int) -> None:
    body = json.dumps({**CHAT, "model": model}).encode()
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=30) as sock:
        sock.sendall(head + _chunk(body[:10]))  # the request has arrived; its body is still coming
        deadline = time.monotonic() + 30
        while gateway.app.in_flight == 0:  # a guard against hanging, not a timing check
            assert time.monotonic() < deadline, "the request never reached the app"
            time.sleep(0.005)
        assert httpx.post(f"{gateway.url}/_gateway/reset", timeout=30).status_code == 200
        sock.sendall(_chunk(body[10:]) + b"0\r\n\r\n")
        assert _status_line(sock) == b"HTTP/1.1 %d " % status + {200: b"OK", 500: b"Internal Server Error",
                                                                   429: b"Too Many Requests"}[status]  # fmt: skip
    assert gateway.calls() == []  # from before the reset: not the next test's call


def test_a_reset_storm_never_turns_a_plain_request_into_a_500(gateway: Gateway) -> None:
    stop = threading.Event()
    statuses: list[int] = []

    def storm() -> None:
        with httpx.Client(base_url=gateway.url, timeout=30) as client:
            while not stop.is_set():
                client.post("/_gateway/reset")

    def load() -> None:
        with httpx.Client(base_url=gateway.base_url, timeout=30) as client:
            statuses.extend(client.post("/chat/completions", json=CHAT).status_code for _ in range(150))

    resetters = [threading.Thread(target=storm) for _ in range(2)]
    senders = [threading.Thread(target=load) for _ in range(4)]
    for thread in resetters + senders:
        thread.start()
    for thread in senders:
        thread.join()
    stop.set()
    for thread in resetters:
        thread.join()
    assert {status: statuses.count(status) for status in set(statuses)} == {200: 600}
