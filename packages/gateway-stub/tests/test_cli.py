"""``evaljig-gateway serve`` from a shell: ready line, real HTTP, clean shutdown on signals."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from .conftest import CHAT


def _serve(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "evaljig_gateway", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_serve_answers_and_stops_cleanly(tmp_path: Path, sig: signal.Signals) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"What is the capital of France?": "Paris"}))
    journal = tmp_path / "calls.jsonl"
    proc = _serve("--answers", str(answers), "--journal", str(journal))
    assert proc.stdout is not None
    ready = proc.stdout.readline().split()
    assert ready[0] == "ready"
    assert ready[1].startswith("http://127.0.0.1:")
    assert ready[1].endswith("/v1")
    reply = httpx.post(f"{ready[1]}/chat/completions", json=CHAT).json()
    assert reply["choices"][0]["message"]["content"] == "Paris"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 0, err
    assert out.strip() == "stopped after 1 call(s)"
    assert [json.loads(line)["status"] for line in journal.read_text().splitlines()] == [200]


def test_bad_answer_key_is_a_clear_error(tmp_path: Path) -> None:
    broken = tmp_path / "answers.jsonl"
    broken.write_text('{"question": "q", "answer": "a"}\n{"question": 1}\n')
    proc = _serve("--answers", str(broken))
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 2
    assert f"{broken}:2:" in err


def test_behaviours_command() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "evaljig_gateway", "behaviours"], capture_output=True, text=True, check=True
    ).stdout
    assert "`always-fail`" in out


def _ready(proc: subprocess.Popen[str]) -> tuple[str, int]:
    assert proc.stdout is not None
    base = proc.stdout.readline().split()[1].removesuffix("/v1")
    return base, int(base.rsplit(":", 1)[1])


def test_sigterm_counts_every_call_served_not_just_those_kept() -> None:
    proc = _serve("--journal-capacity", "2")
    try:
        base, _ = _ready(proc)
        for _ in range(5):
            assert httpx.post(f"{base}/v1/chat/completions", json=CHAT).status_code == 200
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        _kill(proc)
    assert proc.returncode == 0, err
    assert out.strip() == "stopped after 5 call(s); the journal dropped its 3 oldest"


def _send_raw(port: int, data: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(data)
    return sock


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    sock.close()
    return b"".join(chunks)


def test_requests_in_flight_at_shutdown_are_answered_and_journaled(tmp_path: Path) -> None:
    journal = tmp_path / "calls.jsonl"
    proc = _serve("--journal", str(journal))
    try:
        base, port = _ready(proc)
        assert httpx.post(f"{base}/v1/chat/completions", json=CHAT).status_code == 200
        stall = json.dumps({**CHAT, "model": "stall"}).encode()
        head = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n"
        held = _send_raw(port, head.format(len(stall)).encode() + stall)
        half_sent = _send_raw(port, head.format(100).encode() + b'{"model": ')  # body still arriving
        deadline = time.monotonic() + 60
        while httpx.get(f"{base}/_gateway/status").json()["in_flight"] != 2:  # both are being answered
            assert time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        answers = [_read_all(held), _read_all(half_sent)]
        out, err = proc.communicate(timeout=30)
    finally:
        _kill(proc)
    assert proc.returncode == 0, err
    assert out.strip() == "stopped after 3 call(s)"
    assert [a.split(b"\r\n", 1)[0] for a in answers] == [b"HTTP/1.1 503 Service Unavailable"] * 2
    assert all(b"shutting down" in a for a in answers)
    rows = sorted((r["model"] or "", r["status"]) for r in map(json.loads, journal.read_text().splitlines()))
    assert rows == [("", 503), ("gpt-stub", 200), ("stall", 503)]


def _kill(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.communicate()
