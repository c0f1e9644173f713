"""SIGTERM/SIGINT to ``evaljig-config lighteval run``: lighteval's whole process group stops.

``fake_lighteval.py`` (first on PATH) starts a child and a grandchild that ignores SIGTERM;
both keep calling a real gateway on 127.0.0.1 until killed. No timing is asserted: the test
waits for known events (both calling, the CLI exiting, the processes gone), then checks that
the journal no longer grows while it makes calls of its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from evaljig_gateway import Gateway

from .conftest import FAKE_KEY_ENV, HOSTILE_KEY, SPEC, leaked

ORPHANS = ("orphan-child", "orphan-grandchild")
DEADLINE_S = 120.0  # only bounds a hang; nothing is asserted about time


def wait_for(what: str, condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)


def gone(pid: int) -> bool:
    """Exited: no such process, or a zombie waiting to be reaped (it can make no more calls)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def read_pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


@pytest.fixture
def started(tmp_path: Path, fake_lighteval: Path, gateway: Gateway) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """The CLI running the fake lighteval in ``loop`` mode; everything it started is killed afterwards."""
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SPEC))
    (tmp_path / "t.py").write_text("TASKS_TABLE = []\n")
    run_dir = tmp_path / "run"
    env = {**os.environ, FAKE_KEY_ENV: HOSTILE_KEY, "EVALJIG_FAKE_LIGHTEVAL": "loop"}
    argv = [sys.executable, "-m", "evaljig_config.cli", "lighteval", "run", str(spec), "t|0"]
    argv += ["--custom-tasks", "t.py", "--run-dir", "run", "--base-url", gateway.base_url]
    proc = subprocess.Popen(
        argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, process_group=0
    )
    try:
        yield proc, run_dir
    finally:
        for pid in [proc.pid, *read_pids(run_dir / "pids.txt")]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_stops_lighteval_and_everything_it_started(
    started: tuple[subprocess.Popen[str], Path], gateway: Gateway, signum: int, code: int
) -> None:
    proc, run_dir = started
    wait_for("the child and grandchild to call the gateway", lambda: all(gateway.calls(model=m) for m in ORPHANS))
    pids = read_pids(run_dir / "pids.txt")
    assert len(pids) == 2

    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=DEADLINE_S)

    assert proc.returncode == code
    name = signal.Signals(signum).name
    assert stderr == f"evaljig-config: interrupted by {name}; lighteval stopped, key scrubbed in run\n"
    assert stdout == ""
    wait_for("lighteval's child and grandchild to exit", lambda: all(gone(pid) for pid in pids))
    before = {m: len(gateway.calls(model=m)) for m in ORPHANS}
    with httpx.Client(base_url=gateway.base_url) as client:  # the known event: 20 calls of our own, journaled
        for _ in range(20):
            body = {"model": "marker", "messages": [{"role": "user", "content": "hi"}]}
            client.post("/chat/completions", json=body).raise_for_status()
    wait_for("our own calls in the journal", lambda: len(gateway.calls(model="marker")) == 20)
    assert {m: len(gateway.calls(model=m)) for m in ORPHANS} == before
    assert leaked(run_dir, HOSTILE_KEY) == []
    assert (run_dir / "out" / "results" / "fake" / "results_2026.json").exists()
