"""Record from a foreign OpenAI-compatible server, replay out of process (the gateway) and in process (vcrpy).

The upstream is ``openai_upstream`` (not evaljig's gateway); clients are the real openai SDK and
httpx over real HTTP on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import vcr
import yaml
from openai.types.chat import ChatCompletion

from evaljig_gateway import CassetteError, Exchange, Gateway, Record, Replay, load_cassette, write_cassette
from evaljig_gateway._cassette import pretty_json

from .conftest import openai_client
from .openai_upstream import Upstream, pick_letter

KEY_ENV = "EVALJIG_TEST_UPSTREAM_KEY"
KEY = "sk-upstream-0123456789abcdef"  # a made-up credential the secret scan must keep out of every file
CLIENT_KEY = "sk-client-credential-42"
MC = "Which planet is largest?\nA. Mars\nB. Jupiter\nC. Venus\nD. Mercury"
PLAIN = {"model": "gpt-x", "messages": [{"role": "user", "content": MC}]}
STREAMED = {"model": "gpt-x", "messages": [{"role": "user", "content": "hello"}], "stream": True}
COMPLETION = {"model": "gpt-x", "prompt": "The sky is", "logprobs": 1, "echo": True, "max_tokens": 1}


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream() as up:
        yield up


@pytest.fixture
def key_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY_ENV


def _client(base_url: str, retries: int = 0) -> openai.OpenAI:
    return openai_client(base_url, api_key=CLIENT_KEY, max_retries=retries)


def _exercise(client: openai.OpenAI) -> list[Any]:
    """The calls every recording makes; their answers, comparable."""
    plain = client.chat.completions.create(**PLAIN)
    chunks = client.chat.completions.create(**STREAMED, stream_options={"include_usage": True})
    completion = client.completions.create(**COMPLETION)
    embedding = client.embeddings.create(model="emb", input=["a", "b"])
    return [plain.model_dump(), [c.model_dump() for c in chunks], completion.model_dump(), embedding.model_dump()]


def _record(path: Path, upstream: Upstream, key_env: str) -> list[Any]:
    with Gateway(tape=Record(path, upstream=upstream.base_url, api_key_env=key_env)) as gw:
        return _exercise(_client(gw.base_url))


def _serve(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "evaljig_gateway", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def _ready(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    assert line[:1] == ["ready"], proc.communicate(timeout=10)
    return line[1]


def _stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.send_signal(signal.SIGINT)
    return proc.communicate(timeout=30)


def test_the_cli_records_a_foreign_server_and_replays_it(tmp_path: Path, upstream: Upstream) -> None:
    cassette = tmp_path / "run.yaml"
    seen_before = len(upstream.seen)
    proc = _serve("--record", str(cassette), "--upstream", upstream.base_url, "--api-key-env", KEY_ENV,
                  env={KEY_ENV: KEY})  # fmt: skip
    try:
        recorded = _exercise(_client(_ready(proc)))
        out, err = _stop(proc)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert out.splitlines()[-1] == f"recorded 4 exchange(s) to {cassette}"
    assert recorded[0]["choices"][0]["message"]["content"] == pick_letter("Which planet is largest?", "ABCD")
    auth = [headers.get("authorization") for _, headers in upstream.seen[seen_before:]]
    assert auth == [f"Bearer {KEY}"] * 4  # the upstream key, never the client's own credential
    text = cassette.read_text()
    for leak in (KEY, CLIENT_KEY, "set-cookie", "openai-organization", "x-request-id", f":{upstream.port}"):
        assert leak not in text
    assert "uri: http://127.0.0.1:8000/v1/chat/completions" in text

    proc = _serve("--replay", str(cassette))
    try:
        base_url = _ready(proc)
        assert _exercise(_client(base_url)) == recorded
        raw = httpx.post(f"{base_url}/chat/completions", json=PLAIN)
        assert raw.headers["x-request-id"].startswith("req_")
        _, err = _stop(proc)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert len(upstream.seen) == seen_before + 4  # replay never went upstream


def test_replay_matches_whatever_the_key_order_whitespace_or_ignored_fields(
    tmp_path: Path, upstream: Upstream, key_env: str
) -> None:
    cassette = tmp_path / "c.yaml"
    recorded = _record(cassette, upstream, key_env)
    reordered = json.dumps({"user": "someone", "metadata": {"run": "7"}, **dict(reversed(PLAIN.items()))}, indent=4)
    with Gateway(tape=Replay(cassette)) as gw:
        answer = httpx.post(f"{gw.base_url}/chat/completions", content=reordered,
                            headers={"content-type": "application/json"})  # fmt: skip
        assert answer.status_code == 200
        assert ChatCompletion.model_validate(answer.json()).model_dump() == recorded[0]
        stream = _client(gw.base_url).chat.completions.create(**STREAMED)  # no stream_options: ignored by default
        assert [c.model_dump() for c in stream] == recorded[1]
    with Gateway(tape=Replay(cassette, ignore_fields=[])) as strict:
        assert httpx.post(f"{strict.base_url}/chat/completions", content=reordered).status_code == 404


def _hand_written(path: Path, answers: list[str]) -> None:
    request = pretty_json(PLAIN)
    exchanges = [
        Exchange("POST", "/v1/chat/completions", request, 200, (("content-type", "application/json"),),
                 pretty_json({"id": f"c{i}", "object": "chat.completion", "created": 1, "model": "gpt-x",
                              "choices": [{"index": 0, "finish_reason": "stop",
                                           "message": {"role": "assistant", "content": text}}]}))
        for i, text in enumerate(answers)
    ]  # fmt: skip
    write_cassette(path, exchanges)


def test_identical_requests_replay_in_recorded_order_then_the_last_repeats(tmp_path: Path) -> None:
    cassette = tmp_path / "c.yaml"
    _hand_written(cassette, ["first", "second"])

    def answers(gw: Gateway, n: int) -> list[str | None]:
        client = _client(gw.base_url)
        return [client.chat.completions.create(**PLAIN).choices[0].message.content for _ in range(n)]

    with Gateway(tape=Replay(cassette)) as gw:
        assert answers(gw, 3) == ["first", "second", "second"]
        gw.reset()
        assert answers(gw, 1) == ["first"]
        assert httpx.post(f"{gw.url}/_gateway/reset").status_code == 200
        assert answers(gw, 2) == ["first", "second"]


def test_a_miss_names_the_closest_recording_with_a_diff_and_is_journaled(
    tmp_path: Path, upstream: Upstream, key_env: str
) -> None:
    cassette = tmp_path / "c.yaml"
    _record(cassette, upstream, key_env)
    changed = {**PLAIN, "messages": [{"role": "user", "content": MC.replace("Jupiter", "Saturn")}]}
    with Gateway(tape=Replay(cassette)) as gw:
        with pytest.raises(openai.NotFoundError) as caught:
            _client(gw.base_url).chat.completions.create(**changed)
        error = caught.value.body
        assert isinstance(error, dict)
        assert error["code"] == "cassette_miss"
        assert error["type"] == "invalid_request_error"
        message = error["message"]
        first = message.splitlines()[0]
        assert first.startswith("Cassette miss: POST /v1/chat/completions differs from the closest recording, ")
        assert "(2 of 3 fields alike): messages[0].content: " in first
        assert "Jupiter" in first
        assert "Saturn" in first
        assert len(message.splitlines()) <= 14
        assert [(c.path, c.status, c.attempt) for c in gw.calls()] == [("/v1/chat/completions", 404, 0)]
        assert gw.calls()[0].body == changed
        assert gw.calls()[0].miss == message


def test_on_miss_record_forwards_the_miss_and_appends_it(tmp_path: Path, upstream: Upstream, key_env: str) -> None:
    cassette = tmp_path / "c.yaml"
    _hand_written(cassette, ["recorded"])
    before = cassette.read_text()
    new = {**PLAIN, "messages": [{"role": "user", "content": "something new"}]}
    seen = len(upstream.seen)
    with Gateway(tape=Replay(cassette, on_miss="record", upstream=upstream.base_url, api_key_env=key_env)) as gw:
        client = _client(gw.base_url)
        assert client.chat.completions.create(**PLAIN).choices[0].message.content == "recorded"
        for _ in range(2):
            assert client.chat.completions.create(**new).choices[0].message.content == "Echo: something new"
    assert len(upstream.seen) == seen + 1  # the second ask was replayed from the new recording
    exchanges = load_cassette(cassette)
    assert len(exchanges) == 2
    assert cassette.read_text().startswith(before.removesuffix("version: 1\n"))
    assert json.loads(exchanges[1].request_body) == new


def test_fail_once_fails_then_answers_with_the_recording(tmp_path: Path, upstream: Upstream, key_env: str) -> None:
    cassette = tmp_path / "c.yaml"
    recorded = _record(cassette, upstream, key_env)
    with Gateway(tape=Replay(cassette)) as gw:
        answer = _client(gw.base_url, retries=2).chat.completions.create(**{**PLAIN, "model": "fail-once-gpt-x"})
        assert answer.model_dump() == recorded[0]
        assert [(c.status, c.attempt) for c in gw.calls()] == [(500, 1), (200, 2)]
        with pytest.raises(openai.InternalServerError):
            _client(gw.base_url).chat.completions.create(**{**PLAIN, "model": "always-fail-gpt-x"})


def test_vcrpy_replays_the_same_cassette_in_process(tmp_path: Path, upstream: Upstream, key_env: str) -> None:
    cassette = tmp_path / "c.yaml"
    recorded = _record(cassette, upstream, key_env)
    player = vcr.VCR(record_mode="none", match_on=("method", "path", "body"))
    with player.use_cassette(str(cassette)) as played:
        client = openai_client("http://127.0.0.1:8000/v1", api_key="sk-anything", max_retries=0)
        assert _exercise(client) == recorded
    assert played.play_count == 4


def test_an_unreachable_upstream_answers_502_and_records_nothing(tmp_path: Path, key_env: str) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    cassette = tmp_path / "c.yaml"
    cassette.write_text("previous\n")
    with Gateway(tape=Record(cassette, upstream=closed, api_key_env=key_env)) as gw:
        answer = httpx.post(f"{gw.base_url}/chat/completions", json=PLAIN)
        assert answer.status_code == 502
        message = answer.json()["error"]["message"]
        assert f"The upstream {closed} could not be reached: ConnectError" in message
        assert KEY not in message
        assert gw.recorded == 0
    assert cassette.read_text() == "previous\n"


def test_upstream_errors_pass_through_and_are_not_recorded(tmp_path: Path, upstream: Upstream, key_env: str) -> None:
    cassette = tmp_path / "c.yaml"
    with Gateway(tape=Record(cassette, upstream=upstream.base_url, api_key_env=key_env)) as gw:
        with pytest.raises(openai.InternalServerError):
            _client(gw.base_url).chat.completions.create(**{**PLAIN, "model": "upstream-500"})
        limited = httpx.post(f"{gw.base_url}/chat/completions", json={**PLAIN, "model": "upstream-429"})
        assert limited.status_code == 429
        assert limited.headers["retry-after"] == "1"
        assert limited.headers["x-ratelimit-remaining-requests"] == "0"
        missing = httpx.post(f"{gw.base_url}/nowhere", json=PLAIN)
        assert missing.status_code == 404
        _client(gw.base_url).chat.completions.create(**PLAIN)
    statuses = [e.status for e in load_cassette(cassette)]
    assert sorted(statuses) == [200, 404]  # the deterministic 404 is true of the request: kept


def test_a_key_echoed_by_the_upstream_is_never_written(tmp_path: Path, upstream: Upstream, key_env: str) -> None:
    cassette = tmp_path / "c.yaml"
    cassette.write_text("previous\n")
    gw = Gateway(tape=Record(cassette, upstream=upstream.base_url, api_key_env=key_env)).start()
    _client(gw.base_url).chat.completions.create(**{**PLAIN, "model": "echo-auth"})
    with pytest.raises(CassetteError) as caught:
        gw.stop()
    assert f"the upstream key (${KEY_ENV})" in str(caught.value)
    assert KEY not in str(caught.value)
    assert cassette.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


def test_a_killed_recording_leaves_the_previous_cassette(tmp_path: Path, upstream: Upstream) -> None:
    cassette = tmp_path / "c.yaml"
    cassette.write_text("previous\n")
    proc = _serve("--record", str(cassette), "--upstream", upstream.base_url)
    try:
        _client(_ready(proc)).chat.completions.create(**PLAIN)
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert cassette.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["c.yaml"]


def test_the_cli_refuses_a_leaking_recording_with_one_line(tmp_path: Path, upstream: Upstream) -> None:
    cassette = tmp_path / "c.yaml"
    proc = _serve("--record", str(cassette), "--upstream", upstream.base_url, "--api-key-env", KEY_ENV,
                  env={KEY_ENV: KEY})  # fmt: skip
    try:
        base_url = _ready(proc)
        query = httpx.post(f"{base_url}/chat/completions?api_key=abc", json=PLAIN)
        assert query.status_code == 200
        _, err = _stop(proc)
    finally:
        proc.kill()
    assert proc.returncode == 2
    assert err.count("\n") == 1
    assert err.startswith(f"evaljig-gateway: {cassette}: refusing to write the cassette: interactions[0].request.uri")
    assert not cassette.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--replay", "a.yaml", "--record", "b.yaml"], "--replay and --record cannot be combined"),
        (["--record", "b.yaml"], "--record needs --upstream URL"),
        (["--replay", "{cassette}", "--on-miss", "record"], "--on-miss record needs --replay CASSETTE and --upstream"),
        (["--upstream", "http://127.0.0.1:1/v1"], "--upstream is only used to record"),
        (["--record", "b.yaml", "--upstream", "ftp://x/v1"], "--upstream must be an http(s) URL"),
        (["--record", "b.yaml", "--upstream", "ftp://me:sk-secret1@x/v1"], "--upstream must not carry credentials"),
        (
            ["--record", "b.yaml", "--upstream", "http://127.0.0.1:1/v1", "--api-key-env", "EVALJIG_UNSET_VAR"],
            "--api-key-env EVALJIG_UNSET_VAR: the environment variable is unset or empty",
        ),
        (["--replay", "{missing}"], "{missing}: cannot read the cassette"),
        (["--replay", "{corrupt}"], "{corrupt}: interactions[0].response.status.code: expected an integer"),
        (["--replay", "{cassette}", "--max-cassette-bytes", "10"], "over the limit of 10 bytes"),
    ],
)
def test_bad_cassette_options_exit_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    cassette, corrupt = tmp_path / "ok.yaml", tmp_path / "corrupt.yaml"
    _hand_written(cassette, ["x"])
    document = yaml.safe_load(cassette.read_text())
    document["interactions"][0]["response"]["status"]["code"] = "abc"
    corrupt.write_text(yaml.safe_dump(document))
    paths = {"cassette": cassette, "corrupt": corrupt, "missing": tmp_path / "missing.yaml"}
    proc = _serve(*(a.format(**paths) for a in args), env={"EVALJIG_UNSET_VAR": ""})
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert message.format(**paths) in err
    assert "sk-secret1" not in err  # a credential in --upstream is never echoed
