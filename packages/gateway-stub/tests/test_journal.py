from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from evaljig_gateway import Gateway, Journal
from evaljig_gateway._journal import DEFAULT_BODY_BYTES

from .conftest import CHAT


def test_journal_is_bounded() -> None:
    journal = Journal(capacity=3)
    for i in range(5):
        journal.record("POST", "/p", "m", 200, i + 1, b"{}")
    assert [c.seq for c in journal.calls()] == [3, 4, 5]


def test_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Journal(capacity=0)


def test_attempts_are_per_model_and_reset(gateway: Gateway, http: httpx.Client) -> None:
    for model in ("a", "b", "a"):
        http.post("/v1/chat/completions", json={**CHAT, "model": model})
    assert [(c.model, c.attempt) for c in gateway.calls()] == [("a", 1), ("b", 1), ("a", 2)]
    assert [c.attempt for c in gateway.calls(model="a")] == [1, 2]
    gateway.reset()
    assert gateway.calls() == []
    http.post("/v1/chat/completions", json={**CHAT, "model": "a"})
    assert [c.attempt for c in gateway.calls()] == [1]


def test_rejected_requests_do_not_count_as_attempts(gateway: Gateway, http: httpx.Client) -> None:
    model = "fail-once"
    assert http.post("/v1/chat/completions", json={"model": model}).status_code == 400  # no messages
    assert http.post("/v1/chat/completions", json={**CHAT, "model": model}).status_code == 500  # its one failure
    assert http.post("/v1/chat/completions", json={**CHAT, "model": model}).status_code == 200
    assert [(c.status, c.attempt) for c in gateway.calls(model=model)] == [(400, 0), (500, 1), (200, 2)]


def test_journal_over_http(gateway: Gateway, http: httpx.Client) -> None:
    http.post("/v1/chat/completions", json={**CHAT, "model": "fail-once"})
    http.post("/v1/chat/completions", json={**CHAT, "model": "other"})
    calls = http.get("/_gateway/calls", params={"model": "fail-once"}).json()["calls"]
    assert [(c["status"], c["attempt"]) for c in calls] == [(500, 1)]
    assert calls[0]["body"] == {**CHAT, "model": "fail-once"}
    assert http.post("/_gateway/reset").json() == {"reset": True}
    assert http.get("/_gateway/calls").json()["calls"] == []
    # the reset restarts the schedule: fail-once fails again
    assert http.post("/v1/chat/completions", json={**CHAT, "model": "fail-once"}).status_code == 500


def test_jsonl_journal_file(tmp_path: Path) -> None:
    sink = tmp_path / "calls.jsonl"
    with Gateway(journal=Journal(sink=sink)) as gw, httpx.Client(base_url=gw.url) as http:
        http.post("/v1/chat/completions", json=CHAT)
        http.post("/v1/chat/completions", content=b"{broken")
    rows = [json.loads(line) for line in sink.read_text().splitlines()]
    assert [(r["status"], r["model"]) for r in rows] == [(200, "gpt-stub"), (400, None)]
    assert rows[1]["body"] == "{broken"


def test_journal_is_bounded_in_bytes_and_counts_what_it_drops() -> None:
    journal = Journal(max_bytes=10_000, body_bytes=1000)
    for i in range(50):
        journal.record("POST", "/v1/chat/completions", "m", 400, 0, b"x" * 3000 + str(i).encode())
    stats = journal.stats()
    calls = journal.calls()
    assert stats["journal_bytes"] <= 10_000
    assert stats["journal_calls"] == len(calls)
    assert journal.dropped == stats["dropped"] == 50 - len(calls) > 0
    assert journal.served == 50
    assert calls[-1].seq == 50  # the oldest went first
    assert {(len(c.raw_body), c.size, c.truncated) for c in calls} == {(1000, 3002, True)}
    entry = calls[-1].as_dict()
    assert (entry["body"], entry["body_size"], entry["body_truncated"]) == ("x" * 1000, 3002, True)
    journal.reset()
    assert (journal.dropped, journal.served, journal.calls()) == (0, 50, [])


def test_journal_bounds_must_be_sane() -> None:
    with pytest.raises(ValueError, match="max bytes"):
        Journal(max_bytes=10)
    with pytest.raises(ValueError, match="body bytes"):
        Journal(body_bytes=-1)


def test_big_bad_bodies_are_journaled_truncated_with_their_size(gateway: Gateway, http: httpx.Client) -> None:
    """The issue's probe, scaled down: 3 MiB bad bodies used to be kept whole (150 of them: over 500 MiB)."""
    big = b"{" + b"x" * (3 * 1024 * 1024)
    for _ in range(3):
        assert http.post("/v1/chat/completions", content=big).status_code == 400
    calls = gateway.calls()
    assert [(c.status, c.size, c.truncated) for c in calls] == [(400, len(big), True)] * 3
    assert {len(c.raw_body) for c in calls} == {DEFAULT_BODY_BYTES}
    stats = http.get("/_gateway/status").json()
    assert stats["journal_bytes"] < 3 * (DEFAULT_BODY_BYTES + 1024)
    rows = http.get("/_gateway/calls").json()["calls"]
    assert [(r["body_size"], r["body_truncated"], len(r["body"])) for r in rows] == [
        (len(big), True, DEFAULT_BODY_BYTES)
    ] * 3


def test_dropped_calls_are_reported_over_http() -> None:
    with (
        Gateway(journal=Journal(max_bytes=64 * 1024, body_bytes=8 * 1024)) as gw,
        httpx.Client(base_url=gw.url) as http,
    ):
        for _ in range(40):
            http.post("/v1/chat/completions", content=b"[" * 20_000)
        reply = http.get("/_gateway/calls").json()
        status = http.get("/_gateway/status").json()
    assert reply["dropped"] == status["dropped"] == 40 - len(reply["calls"]) > 0
    assert status["served"] == 40
    assert status["journal_bytes"] <= status["journal_max_bytes"] == 64 * 1024
    assert [c["seq"] for c in reply["calls"]] == list(range(41 - len(reply["calls"]), 41))


def test_calls_limit_returns_the_newest(gateway: Gateway, http: httpx.Client) -> None:
    for model in ("a", "b", "a", "c"):
        http.post("/v1/chat/completions", json={**CHAT, "model": model})
    newest = http.get("/_gateway/calls", params={"limit": 2}).json()["calls"]
    assert [c["model"] for c in newest] == ["a", "c"]
    assert [c["seq"] for c in http.get("/_gateway/calls", params={"limit": "1", "model": "a"}).json()["calls"]] == [3]
    assert len(http.get("/_gateway/calls", params={"limit": 99}).json()["calls"]) == 4
    assert [c.model for c in gateway.calls(limit=3)] == ["b", "a", "c"]


@pytest.mark.parametrize("bad", ["0", "-1", "abc", "1e3", "2.5", "", "9" * 5000, "\uff11"])
def test_calls_limit_is_validated(http: httpx.Client, bad: str) -> None:
    reply = http.get("/_gateway/calls", params={"limit": bad})
    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "limit"
    assert len(reply.json()["error"]["message"]) < 200


def test_a_request_from_before_a_reset_stays_out_of_the_new_journal(gateway: Gateway) -> None:
    """A test's leftover (a slow request its client gave up on) must not show up as the next test's call."""
    import threading
    import time

    def slow_call() -> None:
        httpx.post(f"{gateway.base_url}/chat/completions", json={**CHAT, "model": "slow-300"}, timeout=30)

    served = gateway.served
    caller = threading.Thread(target=slow_call)
    caller.start()
    deadline = time.monotonic() + 30
    while gateway.app.in_flight == 0 and time.monotonic() < deadline:  # wait for it to arrive, bounded
        time.sleep(0.005)
    gateway.reset()  # what the next test's fixture does
    caller.join()

    assert gateway.calls() == []
    assert gateway.served == served + 1  # answered and counted, just not journaled after the reset
    flaky = httpx.post(f"{gateway.base_url}/chat/completions", json={**CHAT, "model": "fail-once-x"}, timeout=30)
    assert flaky.status_code == 500  # attempt counters were not touched by the old request either


def test_attempt_counters_keep_the_most_recently_called_models() -> None:
    journal = Journal(max_models=2)
    assert [journal.next_attempt(m) for m in ("a", "b", "a", "c")] == [1, 1, 2, 1]  # c pushes out b, the least recent
    assert journal.stats()["models"] == 2
    assert journal.stats()["models_forgotten"] == 1
    assert [journal.next_attempt(m) for m in ("a", "b")] == [3, 1]  # a kept its count; b starts again
    journal.reset()
    assert (journal.stats()["models"], journal.stats()["models_forgotten"]) == (0, 0)
    with pytest.raises(ValueError, match="max models must be at least 1"):
        Journal(max_models=0)


def test_distinct_model_names_do_not_grow_the_gateway() -> None:
    """Every distinct name used to be kept until a reset (+383 MiB for 120 names of 3 MiB)."""
    with Gateway(journal=Journal(max_models=8)) as gw, httpx.Client(base_url=gw.url) as http:
        for i in range(40):
            assert http.post("/v1/chat/completions", json={**CHAT, "model": f"fail-once-{i}"}).status_code == 500
        status = http.get("/_gateway/status").json()
        assert (status["models"], status["models_forgotten"]) == (8, 32)
        # a forgotten name starts counting again (fail-once fails again); a kept one does not
        assert http.post("/v1/chat/completions", json={**CHAT, "model": "fail-once-0"}).status_code == 500
        assert http.post("/v1/chat/completions", json={**CHAT, "model": "fail-once-39"}).status_code == 200


@pytest.mark.parametrize("length", [257, 3 * 1024 * 1024])
def test_a_model_name_over_the_limit_is_a_400_and_is_not_kept(
    gateway: Gateway, http: httpx.Client, length: int
) -> None:
    reply = http.post("/v1/chat/completions", json={**CHAT, "model": "m" * length})
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["param"] == "model"
    assert f"{length:,} characters" in error["message"]
    assert "--max-model-chars" in error["message"]
    assert [(c.status, c.model, c.attempt) for c in gateway.calls()] == [(400, None, 0)]
    assert http.post("/v1/chat/completions", json={**CHAT, "model": "m" * 256}).status_code == 200  # at the limit


def test_an_error_answer_journals_its_openai_code(gateway: Gateway, http: httpx.Client) -> None:
    """lighteval retries a 400 without logging it: the journal is where its cause is read."""
    long_prompt = {
        **CHAT,
        "model": "context-4-gpt-stub",
        "messages": [{"role": "user", "content": "one two three four five six"}],
    }
    assert http.post("/v1/chat/completions", json=long_prompt).status_code == 400
    assert http.post("/v1/chat/completions", json={**CHAT, "model": "tpm-1-gpt-stub"}).status_code == 200
    assert http.post("/v1/chat/completions", json={**CHAT, "model": "tpm-1-gpt-stub"}).status_code == 429
    assert http.post("/v1/chat/completions", json={**CHAT, "model": "fail-once"}).status_code == 500
    assert [(c.status, c.error_code) for c in gateway.calls()] == [
        (400, "context_length_exceeded"),
        (200, None),
        (429, "rate_limit_exceeded"),
        (500, None),  # OpenAI's 500 carries no code
    ]
    served = http.get("/_gateway/calls").json()["calls"]
    assert [c.get("error_code") for c in served] == ["context_length_exceeded", None, "rate_limit_exceeded", None]
    assert "error_code" not in gateway.calls()[1].as_dict()  # a success's entry is as before
