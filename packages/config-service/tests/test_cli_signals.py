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

from .placeholders import FAKE_KEY_ENV, HOSTILE_KEY, SPEC, leaked

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


def _markers(gateway: Gateway, total: int) -> None:
    """The known event: 20 calls of our own, answered and journaled after everything sent before them."""
    with httpx.Client(base_url=gateway.base_url) as client:
        for _ in range(20):
            body = {"model": "marker", "messages": [{"role": "user", "content": "hi"}]}
            client.post("/chat/completions", json=body).raise_for_status()
    wait_for("our own calls in the journal", lambda: len(gateway.calls(model="marker")) == total)


def assert_no_more_calls(gateway: Gateway) -> None:
    """Nobody but us calls while we make 20 calls (the first batch lets in-flight ones land).

    Counted with ``served`` (every call answered), not by journal rows: the orphans made thousands
    of calls, so the journal's capacity drops old rows as ours arrive.
    """
    _markers(gateway, 20)
    before = gateway.served
    _markers(gateway, 40)
    assert gateway.served - before == 20


@pytest.fixture
def started(tmp_path: Path, fake_lighteval: Path, gateway: Gateway) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """The CLI running the fake lighteval in ``loop`` mode; everything it started is killed afterwards."""
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SPEC))
    (tmp_path / "t.py").write_text("TASKS_TABLE = []\n")
    run_dir = tmp_path / "run"
    env = {**os.environ, FAKE_KEY_ENV: HOSTILE_KEY, "EVALJIG_FAKE_LIGHTEVAL": "loop"}
    argv = [sys.executable, "-m", "evaljig_config._cli", "lighteval", "run", str(spec), "t|0"]
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
    assert_no_more_calls(gateway)
    assert leaked(run_dir, HOSTILE_KEY) == []
    assert (run_dir / "out" / "results" / "fake" / "results_2026.json").exists()


#: lighteval's Python API as the runner uses it, with evaluate() shaped like lighteval 0.13's litellm
#: backend: ``with ThreadPoolExecutor`` around ``executor.map``, whose exit waits for the requests in
#: flight, each retried inside its worker (here without end).
FAKE_PACKAGE = {
    "lighteval/__init__.py": "",
    "lighteval/logging/__init__.py": "",
    "lighteval/models/__init__.py": "",
    "lighteval/models/endpoints/__init__.py": "",
    "lighteval/models/endpoints/litellm_model.py": """
class LiteLLMModelConfig:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)
""",
    "lighteval/logging/evaluation_tracker.py": """
class EvaluationTracker:
    def __init__(self, output_dir, save_details):
        self.output_dir = output_dir
""",
    "lighteval/pipeline.py": """
import json, pathlib, time, urllib.request
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

ParallelismManager = SimpleNamespace(NONE="none")


class PipelineParameters:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


class Pipeline:
    def __init__(self, tasks, pipeline_parameters, evaluation_tracker, model_config):
        self.config = model_config
        out = pathlib.Path(evaluation_tracker.output_dir) / "results" / "fake" / "results_2026.json"
        out.parent.mkdir(parents=True)
        out.write_text(json.dumps({"config": {"api_key": model_config.api_key}}))

    def call(self, number):
        # like lighteval's __call_api: one request retried (here: without end) inside one worker
        body = json.dumps({"model": "orphan-thread", "messages": [{"role": "user", "content": str(number)}]})
        for _attempt in range(10**9):
            request = urllib.request.Request(
                self.config.base_url + "/chat/completions", body.encode(), {"Content-Type": "application/json"}
            )
            urllib.request.urlopen(request, timeout=10).read()
            time.sleep(0.05)

    def evaluate(self):
        results = []
        with ThreadPoolExecutor(2) as executor:
            for entry in executor.map(self.call, range(4)):
                results.append(entry)
""",
    "diskcache.py": "class Cache:\n    def __init__(self, directory=None, **kwargs):\n        pass\n",
}


def test_sigterm_on_the_python_path_stops_lighteval_threads(tmp_path: Path, gateway: Gateway) -> None:
    for name, text in FAKE_PACKAGE.items():
        (tmp_path / "lib" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "lib" / name).write_text(text)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SPEC))
    (tmp_path / "t.py").write_text("TASKS_TABLE = []\n")
    env = {**os.environ, FAKE_KEY_ENV: HOSTILE_KEY, "PYTHONPATH": str(tmp_path / "lib")}
    argv = [sys.executable, "-m", "evaljig_config._cli", "lighteval", "run", str(spec), "t|0", "--path", "python"]
    argv += ["--custom-tasks", "t.py", "--run-dir", "run", "--base-url", gateway.base_url]
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for("lighteval's threads to call the gateway", lambda: len(gateway.calls(model="orphan-thread")) >= 2)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=DEADLINE_S)
    finally:
        proc.kill()
        proc.communicate()
    assert proc.returncode == 143
    assert stderr == "evaljig-config: interrupted by SIGTERM; lighteval stopped, key scrubbed in run\n"
    assert stdout == ""
    assert_no_more_calls(gateway)
    assert leaked(tmp_path / "run", HOSTILE_KEY) == []
