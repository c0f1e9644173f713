"""No recording is lost or unreplayable: concurrent recorders merge, order is what clients got, any text round-trips.

Real HTTP on 127.0.0.1: ``openai_upstream`` for plain recording, and a small gated upstream
(below) that holds each request until the test releases it, so the order answers reach the
clients is chosen by the test, not by timing.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from evaljig_gateway import CassetteError, Exchange, Gateway, Record, Replay, load_cassette, write_cassette
from evaljig_gateway._cassette import dump_cassette, match_key
from evaljig_gateway._record import Recorder
from evaljig_gateway._replay import Replayer

from .openai_upstream import Upstream

PLAIN = {"model": "gpt-x", "messages": [{"role": "user", "content": "hello"}]}


def _ask(base_url: str, content: str) -> str:
    request = {**PLAIN, "messages": [{"role": "user", "content": content}]}
    answer = httpx.post(f"{base_url}/chat/completions", json=request, timeout=30)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["choices"][0]["message"]["content"])


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream() as up:
        yield up


def _seed(path: Path, upstream: Upstream, questions: list[str]) -> None:
    with Gateway(tape=Record(path, upstream=upstream.base_url)) as gw:
        for q in questions:
            _ask(gw.base_url, q)


# --- concurrent recorders of one cassette ---------------------------------------------------------------------


@pytest.mark.parametrize("first_to_stop", [0, 1])
def test_two_on_miss_recorders_of_one_cassette_lose_nothing_and_agree_on_the_order(
    tmp_path: Path, upstream: Upstream, first_to_stop: int
) -> None:
    """Two servers replaying one cassette with on_miss="record" (two xdist workers): every miss lands, and the
    file is the same bytes whichever stops last."""
    cassette = tmp_path / "c.yaml"
    _seed(cassette, upstream, ["seed"])
    gateways = [Gateway(tape=Replay(cassette, on_miss="record", upstream=upstream.base_url)).start() for _ in range(2)]
    for worker, gw in enumerate(gateways):
        for i in range(6):
            _ask(gw.base_url, f"worker {worker} question {i}")
    gateways[first_to_stop].stop()
    gateways[1 - first_to_stop].stop()
    asked = {json.loads(e.request_body)["messages"][0]["content"] for e in load_cassette(cassette)}
    assert asked == {"seed"} | {f"worker {w} question {i}" for w in range(2) for i in range(6)}
    exchanges = load_cassette(cassette)
    assert json.loads(exchanges[0].request_body)["messages"][0]["content"] == "seed"  # the replayed part first
    contents = [json.loads(e.request_body)["messages"][0]["content"] for e in exchanges[1:]]
    assert contents == sorted(contents)  # the appended exchanges are sorted by request: no stop order shows


def _serve(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "evaljig_gateway", "serve", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def _ready(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    assert line[:1] == ["ready"], proc.communicate(timeout=10)
    return line[1]


def test_two_cli_recorders_of_one_cassette_both_land(tmp_path: Path, upstream: Upstream) -> None:
    cassette = tmp_path / "c.yaml"
    procs = [_serve("--record", str(cassette), "--upstream", upstream.base_url) for _ in range(2)]
    try:
        urls = [_ready(p) for p in procs]
        for n, url in enumerate(urls):
            for i in range(5):
                _ask(url, f"recorder {n} question {i}")
        outs = []
        for proc in procs:
            proc.send_signal(signal.SIGINT)
            outs.append(proc.communicate(timeout=60))
    finally:  # never leave a server running (its pipes would be closed by the collector, in another test)
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert [p.returncode for p in procs] == [0, 0], outs
    assert all(out.splitlines()[-1] == f"recorded 5 exchange(s) to {cassette}" for out, _ in outs)
    assert len(load_cassette(cassette)) == 10


# --- what clients got is what replay gives ----------------------------------------------------------------------


class _Gated:
    """An upstream answering ``answer-<n>`` to its n-th request, each held until the test releases n."""

    def __init__(self) -> None:
        self.arrived = 0
        self._released: set[int] = set()
        self._lock = threading.Lock()

    def release(self, n: int) -> None:
        with self._lock:
            self._released.add(n)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        with self._lock:
            self.arrived += 1
            n = self.arrived
        while True:
            with self._lock:
                if n in self._released:
                    break
            await asyncio.sleep(0.002)
        message = {"role": "assistant", "content": f"answer-{n}"}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        body = json.dumps({"id": "x", "object": "chat.completion", "model": "gpt-x", "choices": [choice]}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})


@pytest.fixture
def gated() -> Iterator[tuple[_Gated, str]]:
    app = _Gated()
    with Upstream(app) as upstream:
        yield app, upstream.base_url


def _wait_for(predicate: Any) -> None:
    for _ in range(5000):
        if predicate():
            return
        threading.Event().wait(0.002)
    raise AssertionError("the upstream never saw the requests")


def test_identical_concurrent_misses_replay_in_the_order_clients_got_them(
    tmp_path: Path, gated: tuple[_Gated, str]
) -> None:
    app, upstream_url = gated
    cassette = tmp_path / "c.yaml"
    _seed_other(cassette)
    with Gateway(tape=Replay(cassette, on_miss="record", upstream=upstream_url)) as gw, ThreadPoolExecutor(2) as pool:
        first = pool.submit(_ask, gw.base_url, "same")
        _wait_for(lambda: app.arrived == 1)
        second = pool.submit(_ask, gw.base_url, "same")
        _wait_for(lambda: app.arrived == 2)
        app.release(2)  # the second upstream answer reaches its client first
        got = [second.result(timeout=30)]
        app.release(1)
        got.append(first.result(timeout=30))
        got.append(_ask(gw.base_url, "same"))  # asked again in the same session: as a replay would answer
    assert got == ["answer-2", "answer-1", "answer-1"]
    with Gateway(tape=Replay(cassette)) as replay:
        assert [_ask(replay.base_url, "same") for _ in range(3)] == got


def _seed_other(cassette: Path) -> None:
    choice = {"index": 0, "message": {"role": "assistant", "content": "other"}, "finish_reason": "stop"}
    answer = json.dumps({"id": "x", "object": "chat.completion", "model": "gpt-x", "choices": [choice]}, indent=2)
    request = json.dumps({**PLAIN, "messages": [{"role": "user", "content": "other"}]}, indent=2)
    write_cassette(cassette, [Exchange("POST", "/v1/chat/completions", request, 200,
                                       (("content-type", "application/json"),), answer, "OK")])  # fmt: skip


# --- every recorded answer replays -------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_categories=()), max_size=40))
@example("cut emoji \ud83d")
def test_any_answer_text_records_and_replays_exactly(text: str) -> None:
    """Whatever a JSON answer holds (lone surrogates too: an upstream that cut an emoji in half sends
    ``"\\ud83d"``), the recording loads and replays the same JSON value."""
    upstream_bytes = json.dumps({"content": text}).encode()  # ASCII, surrogates as \\u escapes
    recorder = Recorder("http://127.0.0.1:9/v1")
    response = httpx.Response(200, content=upstream_bytes, headers={"content-type": "application/json"})
    _, exchange = recorder._answer("POST", "/v1/chat/completions", json.dumps(PLAIN).encode(), response)
    assert exchange is not None
    data = dump_cassette([exchange])
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"evaljig-roundtrip-{os.getpid()}.yaml"
    try:
        path.write_bytes(data)
        [loaded] = load_cassette(path)
    finally:
        path.unlink(missing_ok=True)
    assert loaded == exchange
    reply = Replayer([loaded]).answer(match_key("POST", "/v1/chat/completions", PLAIN))
    assert reply is not None
    assert json.loads(reply.content) == {"content": text}


def test_a_text_that_yaml_cannot_hold_is_refused_when_written_not_when_read(tmp_path: Path) -> None:
    odd = Exchange("POST", "/v1/x", "{}", 200, (("content-type", "text/plain"),), "cut \ud83d")
    with pytest.raises(CassetteError, match=r"interactions\[0\].response.body.string: .*surrogate"):
        write_cassette(tmp_path / "c.yaml", [odd])
    assert not (tmp_path / "c.yaml").exists()


# --- an unwritable cassette is refused at start ------------------------------------------------------------------


@pytest.mark.parametrize("where", ["folder", "proc"])
def test_an_unwritable_record_path_is_refused_at_start(tmp_path: Path, upstream: Upstream, where: str) -> None:
    target = tmp_path if where == "folder" else Path("/proc/version")
    seen = len(upstream.seen)
    with pytest.raises(CassetteError) as caught:
        Gateway(tape=Record(target, upstream=upstream.base_url))
    assert str(caught.value).startswith(f"{target}: cannot record to this path")
    assert ".tmp" not in str(caught.value)
    with _serve("--record", str(target), "--upstream", upstream.base_url) as proc:  # waited for and closed
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"evaljig-gateway: {target}: cannot record to this path")
    assert len(upstream.seen) == seen


# --- a stop writes fast: exchanges are serialised as they are recorded -------------------------------------------


def test_stop_serialises_nothing_already_recorded(
    tmp_path: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    cassette = tmp_path / "c.yaml"
    _seed(cassette, upstream, ["a", "b"])
    gw = Gateway(tape=Replay(cassette, on_miss="record", upstream=upstream.base_url)).start()
    for q in ("c", "d", "e"):
        _ask(gw.base_url, q)
    dumps: list[object] = []
    real_dump = yaml.dump
    monkeypatch.setattr(yaml, "dump", lambda *a, **k: dumps.append(a) or real_dump(*a, **k))
    gw.stop()
    assert dumps == []  # neither the loaded cassette nor the new exchanges were dumped again at stop
    monkeypatch.undo()
    exchanges = load_cassette(cassette)
    assert cassette.read_bytes() == dump_cassette(exchanges)  # and the bytes are the writer's, as ever
