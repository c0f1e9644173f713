"""Bounded work per request: oversized asks are refused before any work, big ones never stall others."""

from __future__ import annotations

import json
import random
import signal
import socket
import subprocess
import sys
import time
from typing import Any

import httpx
import pytest

from evaljig_gateway import Gateway, Limits, _content, _logprobs, _tokenizer
from evaljig_gateway._errors import GatewayError
from evaljig_gateway._limits import check_echo

from .conftest import CHAT, gpt2

#: The request from the issue: ~20 KB of JSON asking for 32.8 million floats.
HUGE_EMBEDDINGS = {"model": "embed", "input": ["x"] * 4000, "dimensions": 8192}


def _error(reply: httpx.Response) -> dict[str, Any]:
    error: dict[str, Any] = reply.json()["error"]
    return error


def test_the_20kb_embeddings_request_is_refused_before_any_work(gateway: Gateway, http: httpx.Client) -> None:
    # a timeout rather than a timed assert: before the limit this request took 30-45 s (or longer)
    reply = http.post("/v1/embeddings", json=HUGE_EMBEDDINGS, timeout=30)
    assert reply.status_code == 400
    error = _error(reply)
    assert error["param"] == "input"
    assert error["code"] == "request_too_large"
    assert "4000 x 8192" in error["message"]
    assert "32,768,000" in error["message"]
    assert "1,048,576" in error["message"]
    assert "--max-embedding-values" in error["message"]
    assert [(c.status, c.attempt) for c in gateway.calls()] == [(400, 0)]


def _chat(**extra: Any) -> dict[str, Any]:
    return {**CHAT, **extra}


def _completion(**extra: Any) -> dict[str, Any]:
    return {"model": "m", "prompt": "Say hi", **extra}


#: Prompt text one character over ``Limits().max_prompt_chars`` (1 MiB), refused before it is tokenised.
_LONG = "a1" * (512 * 1024) + "a"


@pytest.mark.parametrize(
    ("path", "body", "param", "product"),
    [
        ("/v1/chat/completions", _chat(messages=[{"role": "user", "content": _LONG}]), "messages", "1,048,577"),
        ("/v1/completions", _completion(prompt=_LONG), "prompt", "1,048,577"),
        ("/v1/responses", {"model": "m", "input": _LONG}, "input", "1,048,577"),
        ("/v1/embeddings", {"model": "e", "input": [_LONG[:524_289], _LONG[:524_288]]}, "input", "1,048,577"),
        ("/v1/chat/completions", _chat(n=128, max_tokens=10_000), "max_tokens", "1,280,000"),
        ("/v1/chat/completions", _chat(n=64, max_completion_tokens=20_000), "max_completion_tokens", "1,280,000"),
        ("/v1/completions", _completion(prompt=["p"] * 100, n=50), "n", "5,000"),
        ("/v1/completions", _completion(prompt=["p"] * 5000), "prompt", "5,000"),
        ("/v1/completions", _completion(n=100, max_tokens=20_000), "max_tokens", "2,000,000"),
        ("/v1/embeddings", {"model": "e", "input": ["a"] * 200, "dimensions": 8192}, "input", "1,638,400"),
    ],
)  # fmt: skip
def test_work_limits_name_the_param(
    http: httpx.Client, path: str, body: dict[str, Any], param: str, product: str
) -> None:
    reply = http.post(path, json=body, timeout=30)
    assert reply.status_code == 400, reply.text
    assert _error(reply)["param"] == param
    assert product in _error(reply)["message"]


#: The request from issue 23: an ~88 KiB prompt echoed 128 times with 5 log-probs per token, within every
#: other limit, ran past 90 s at 578 MiB before the echo limit.
ECHO_BOMB = {"model": "m", "prompt": "word " * 17_600, "echo": True, "logprobs": 5, "n": 128, "max_tokens": 1}


def test_the_echo_logprobs_request_is_refused_before_any_work(gateway: Gateway, http: httpx.Client) -> None:
    assert 80 * 1024 < len(json.dumps(ECHO_BOMB)) < 96 * 1024
    reply = http.post("/v1/completions", json=ECHO_BOMB, timeout=30)  # a guard: before the limit it ran for minutes
    assert reply.status_code == 400, reply.text[:300]
    error = _error(reply)
    assert (error["param"], error["code"]) == ("echo", "request_too_large")
    assert "echoed prompt tokens x n x logprobs" in error["message"]
    assert "--max-echo-tokens" in error["message"]
    assert f"{Limits().max_echo_tokens:,}" in error["message"]
    assert [(c.status, c.attempt) for c in gateway.calls()] == [(400, 0)]


@pytest.mark.parametrize(
    ("n", "logprobs", "status"),
    [(5, 2, 200), (6, 2, 400), (10, 0, 200), (11, 0, 400), (10, None, 200), (11, None, 400)],
)
def test_echo_is_counted_as_prompt_tokens_x_n_x_logprobs(n: int, logprobs: int | None, status: int) -> None:
    prompt = "a b c d e f g h i j"  # 10 tokens; logprobs 0 still scores the token itself (counts 1)
    body = {"model": "m", "prompt": prompt, "echo": True, "n": n, "max_tokens": 1}
    if logprobs is not None:
        body["logprobs"] = logprobs
    with Gateway(limits=Limits(max_echo_tokens=100)) as gw, httpx.Client(base_url=gw.url) as http:
        reply = http.post("/v1/completions", json=body)
        assert reply.status_code == status, reply.text
        if status == 400:
            factors = f"10 x {n} x {max(logprobs, 1)})" if logprobs is not None else f"10 x {n})"
            assert factors in _error(reply)["message"]
        else:
            assert all(c["text"].startswith(prompt) for c in reply.json()["choices"])
        assert http.post("/v1/completions", json={**body, "echo": False}).status_code == 200  # no echo: not counted


@pytest.mark.parametrize(
    ("prompts", "n", "logprobs", "cost"),
    [
        (["Say: hi, there"], 1, None, 5),
        (["a b", "c"], 2, 3, 18),
        ([], 4, 5, 0),
    ],
)
def test_echo_cost_is_prompt_tokens_x_n_x_logprobs(prompts: Any, n: int, logprobs: int | None, cost: int) -> None:
    check_echo(Limits(max_echo_tokens=max(cost, 1)), prompts, n, logprobs)  # at the limit: no error
    if cost:
        with pytest.raises(GatewayError) as refused:
            check_echo(Limits(max_echo_tokens=cost - 1), prompts, n, logprobs)
        assert refused.value.param == "echo"
        assert f"= {cost:,} exceeds" in refused.value.message


@pytest.mark.parametrize(("several", "spelled"), [(False, False), (True, False), (False, True)])
def test_echo_of_token_id_prompts_is_counted(several: bool, spelled: bool) -> None:
    """One token-id prompt or several: the echo limit counts one token per id, as the echo returns them, even
    when their text would tokenize to fewer (``spelled``: "Say: hi" one id per byte, 7 ids for 3 tokens of text)."""
    ids = [gpt2().encode_single_token(bytes([b])) for b in b"Say: hi"] if spelled else gpt2().encode("Say: hi, there")
    assert len(ids) == (7 if spelled else 5)
    assert _tokenizer.count("Say: hi") == 3  # the spelled ids' text: fewer tokens than ids
    body = {"model": "m", "prompt": [ids[:2], ids[2:]] if several else ids, "echo": True, "n": 2, "logprobs": 3}
    cost = len(ids) * 2 * 3
    with Gateway(limits=Limits(max_echo_tokens=cost)) as gw, httpx.Client(base_url=gw.url) as http:
        assert http.post("/v1/completions", json={**body, "max_tokens": 0}).status_code == 200  # at the limit
    with Gateway(limits=Limits(max_echo_tokens=cost - 1)) as gw, httpx.Client(base_url=gw.url) as http:
        error = _error(http.post("/v1/completions", json={**body, "max_tokens": 0}))
    assert error["param"] == "echo"
    assert f"= {cost:,} exceeds" in error["message"]


def test_echo_counting_stops_once_over_the_limit() -> None:
    prompts = ["x" + " x" * 999] * 50  # 1,000 tokens each
    with pytest.raises(GatewayError, match=r"\(at least 1,000 x 1\)") as refused:
        check_echo(Limits(max_echo_tokens=500), prompts, 1, None)
    assert refused.value.param == "echo"


def test_one_long_prompt_is_not_counted_in_full_to_refuse_it() -> None:
    """Refusing a hostile prompt costs a span or two of counting, not the whole text (issue 23's abuse bench)."""
    words = 200_000
    with pytest.raises(GatewayError, match=r"\(at least [0-9,]+ x 128 x 5\)") as refused:
        check_echo(Limits(max_echo_tokens=262_144), ["word " * words], 128, 5)
    counted = int(refused.value.message.split("at least ")[1].split(" ")[0].replace(",", ""))
    assert 262_144 // (128 * 5) < counted < words // 10
    assert _tokenizer.count("word " * words, stop_above=10) < words // 10
    assert _content.count_tokens("word " * words) == words + 1  # the trailing space is a token too


def test_an_embeddings_request_over_the_limit_is_refused_before_its_items_are_read(http: httpx.Client) -> None:
    """The limit needs only the number of inputs: a refused request costs no per-item work."""
    body = {"model": "e", "input": ["x"] * 4000 + [None], "dimensions": 8192}
    error = _error(http.post("/v1/embeddings", json=body))
    assert (error["param"], error["code"]) == ("input", "request_too_large")
    assert "4001 x 8192" in error["message"]


def test_limits_are_configurable() -> None:
    limits = Limits(max_embedding_values=16, max_choices=3, max_output_tokens=100)
    with Gateway(limits=limits) as gw, httpx.Client(base_url=gw.url) as http:
        assert http.post("/v1/embeddings", json={"model": "e", "input": ["a", "b"], "dimensions": 8}).status_code == 200
        refused = http.post("/v1/embeddings", json={"model": "e", "input": ["a", "b", "c"], "dimensions": 8})
        assert (refused.status_code, _error(refused)["param"]) == (400, "input")
        assert http.post("/v1/completions", json=_completion(prompt=["a", "b", "c"])).status_code == 200
        assert http.post("/v1/completions", json=_completion(prompt=["a", "b"], n=2)).status_code == 400
        assert http.post("/v1/chat/completions", json=_chat(n=2, max_tokens=50)).status_code == 200
        assert http.post("/v1/chat/completions", json=_chat(n=2, max_tokens=51)).status_code == 400


@pytest.mark.parametrize("field", ["max_choices", "max_header_count", "max_body_bytes"])
@pytest.mark.parametrize("value", [0, -1, True])
def test_limits_must_be_positive_integers(field: str, value: int) -> None:
    with pytest.raises(ValueError, match=field):
        Limits(**{field: value})


def test_serve_refuses_a_bad_limit_in_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "evaljig_gateway", "serve", "--max-choices", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["evaljig-gateway: limit max_choices must be a positive integer, got 0"]


@pytest.mark.parametrize("seed", range(5))
def test_counts_pieces_and_scores_agree(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = ["word", "x", " ", "\n", "\t", ",", "é", "__", "9", "  "]
    spaced = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 60_000)))
    text = spaced + "y" * rng.randrange(0, 40_000)  # one long word: no whitespace to cut at
    assert _content.count_tokens(text) == _tokenizer.count(text, stop_above=len(text)) == len(_tokenizer.pieces(text))
    short = text[:3000]
    pieces = _tokenizer.pieces(short)
    scored = _logprobs.score_pieces(short, pieces, 0, 2, None)
    assert scored.tokens == pieces
    assert "".join(scored.tokens) == short
    assert scored.token_logprobs[1:] == [
        _logprobs.score(short, at, piece, None)[0] for at, piece in zip(scored.text_offset[1:], pieces[1:], strict=True)
    ]


def _status(base: str) -> dict[str, Any]:
    status: dict[str, Any] = httpx.get(f"{base}/_gateway/status", timeout=30).json()
    return status


def _wait_for(base: str, key: str, value: int) -> dict[str, Any]:
    """Poll ``/_gateway/status`` until ``key`` equals ``value`` (a guard against hanging, not a timing check)."""
    deadline = time.monotonic() + 60
    while (status := _status(base))[key] != value:
        assert time.monotonic() < deadline, f"gateway status never reached {key}={value}: {status}"
        time.sleep(0.02)
    return status


def _raw_post(port: int, path: str, body: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    sock.sendall(head.encode() + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    return sock


def test_a_heavy_request_in_flight_does_not_block_others(tmp_path: Any) -> None:
    """With the limit raised, the 32.8M-float request runs; others are answered while it is known to run."""
    journal = tmp_path / "calls.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "evaljig_gateway", "serve", "--port", "0", "--journal", str(journal),
         "--max-embedding-values", "40000000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        base = proc.stdout.readline().split()[1].removesuffix("/v1")
        port = int(base.rsplit(":", 1)[1])
        heavy = _raw_post(port, "/v1/embeddings", json.dumps(HUGE_EMBEDDINGS).encode())
        _wait_for(base, "in_flight", 1)  # the status endpoint itself answers while the heavy one runs
        normal = httpx.post(f"{base}/v1/chat/completions", json=CHAT, timeout=30)
        assert normal.status_code == 200
        assert _status(base)["in_flight"] == 1  # still computing: the chat was answered in between
        heavy.setblocking(False)
        with pytest.raises(BlockingIOError):
            heavy.recv(1)  # and the heavy one has not answered yet
        heavy.close()  # the client gives up: the gateway stops the work
        assert _wait_for(base, "in_flight", 0)["served"] == 2
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert out.splitlines()[-1] == "stopped after 2 call(s)"
    rows = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [(r["path"], r["status"]) for r in rows] == [("/v1/chat/completions", 200), ("/v1/embeddings", 499)]
