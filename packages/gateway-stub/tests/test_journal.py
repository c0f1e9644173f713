from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from evaljig_gateway import Gateway, Journal

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
    with Gateway(journal_path=sink) as gw, httpx.Client(base_url=gw.url) as http:
        http.post("/v1/chat/completions", json=CHAT)
        http.post("/v1/chat/completions", content=b"{broken")
    rows = [json.loads(line) for line in sink.read_text().splitlines()]
    assert [(r["status"], r["model"]) for r in rows] == [(200, "gpt-stub"), (400, None)]
    assert rows[1]["body"] == "{broken"
