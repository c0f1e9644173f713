"""``evaljig-gateway serve`` from a shell: ready line, real HTTP, clean shutdown on signals."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from .conftest import CHAT


def _serve(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "evaljig_gateway.cli", "serve", "--port", "0", *args],
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
        [sys.executable, "-m", "evaljig_gateway.cli", "behaviours"], capture_output=True, text=True, check=True
    ).stdout
    assert "`always-fail`" in out
