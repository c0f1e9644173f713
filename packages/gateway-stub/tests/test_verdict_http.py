"""The verdict over real HTTP: scripted clients and the real OpenAI SDK against a real gateway.

Timing facts are large and one-sided, never an upper bound on how long something took: the bad
client retries at once after a ``Retry-After`` of 30 s (it cannot take 30 s to send a request), the
good one sleeps the 50 ms it was asked to (a sleep never ends early).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai
import pytest

from evaljig_gateway import Gateway, Journal, assert_resilient, judge

from .conftest import openai_client

RATE_LIMITED = "fail-once-rate-limit-gpt-stub"  # 429 (with Retry-After) once, then 200
REJECTED = "bad-request-gpt-stub"  # 400 on every call


def ask(model: str, question: str = "What is 2+2?") -> dict[str, object]:
    return {"model": model, "messages": [{"role": "user", "content": question}]}


def careless_client(http: httpx.Client) -> None:
    """Retries whatever fails, at once: ignores Retry-After and retries a 400."""
    for body in (ask(RATE_LIMITED), ask(REJECTED)):
        if http.post("/v1/chat/completions", json=body).status_code >= 400:
            http.post("/v1/chat/completions", json=body)


def careful_client(http: httpx.Client) -> None:
    """Retries a 429/5xx after the wait the answer asks for; surfaces a 4xx."""
    for body in (ask(RATE_LIMITED), ask(REJECTED)):
        reply = http.post("/v1/chat/completions", json=body)
        if reply.status_code == 429 or reply.status_code >= 500:
            time.sleep(int(reply.headers["retry-after-ms"]) / 1000)
            http.post("/v1/chat/completions", json=body)


def test_the_verdict_finds_the_planted_faults_of_a_careless_client() -> None:
    with Gateway(retry_after_ms=30_000) as gw, httpx.Client(base_url=gw.url, timeout=10) as http:
        careless_client(http)
        calls = gw.calls()
        with pytest.raises(AssertionError) as caught:
            assert_resilient(gw)
    assert [(c.seq, c.status, c.retry_after_ms) for c in calls] == [(1, 429, 30_000), (2, 200, None), (3, 400, None),
                                                                     (4, 400, None)]  # fmt: skip
    findings = [(f.check, [a.seq for a in f.calls]) for f in judge(calls).findings]
    assert findings == [("retry_after_ignored", [1, 2]), ("retried_non_retryable", [3, 4])]
    assert "Retry-After asked for 30000 ms" in str(caught.value)
    assert "#4 retried #3, a 400" in str(caught.value)


def test_the_verdict_passes_a_careful_client() -> None:
    with Gateway(retry_after_ms=50) as gw, httpx.Client(base_url=gw.url, timeout=10) as http:
        careful_client(http)
        verdict = assert_resilient(gw)
        statuses = [c.status for c in gw.calls()]
    assert statuses == [429, 200, 400]
    assert (verdict.requests, verdict.attempts) == (2, 3)


def test_the_openai_sdk_honours_retry_after_and_does_not_retry_a_400(gateway: Gateway) -> None:
    """The real SDK's default policy (2 retries, Retry-After honoured: 1 ms here) passes the verdict."""
    client = openai_client(gateway.base_url)
    client.chat.completions.create(**ask("fail-2-gpt-stub"))  # type: ignore[call-overload]
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(**ask(REJECTED))  # type: ignore[call-overload]
    assert [c.status for c in gateway.calls()] == [500, 500, 200, 400]
    assert assert_resilient(gateway).attempts == 4


def test_every_entry_is_timed_over_http_and_in_the_jsonl_sink(tmp_path: Path) -> None:
    sink = tmp_path / "calls.jsonl"
    with (
        Gateway(retry_after_ms=30_000, journal=Journal(sink=sink)) as gw,
        httpx.Client(base_url=gw.url, timeout=10) as http,
    ):
        http.post("/v1/chat/completions", json=ask(RATE_LIMITED))
        http.post("/v1/chat/completions", content=b"{not json")
        served = http.get("/_gateway/calls").json()["calls"]
        (untimed, _) = (c.as_dict() for c in gw.calls())
    written = [json.loads(line) for line in sink.read_text().splitlines()]
    assert written == served
    for row in served:
        assert 0 < row["started_ns"] <= row["ended_ns"]
        assert row["wall_time"] > 1_600_000_000
        assert row["cut"] is False
    assert served[0]["started_ns"] < served[1]["started_ns"]
    assert [r["retry_after_ms"] for r in served] == [30_000, None]
    # what tests and failure bundles compare stays free of clock readings
    assert not {"started_ns", "ended_ns", "wall_time"} & set(untimed)


def _verdict_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evaljig_gateway", "verdict", *args], capture_output=True, text=True, check=False
    )


def test_the_verdict_command_over_a_journal_file_and_a_live_gateway(tmp_path: Path) -> None:
    sink = tmp_path / "calls.jsonl"
    with (
        Gateway(retry_after_ms=30_000, journal=Journal(sink=sink)) as gw,
        httpx.Client(base_url=gw.url, timeout=10) as http,
    ):
        careless_client(http)
        live = _verdict_cli("--url", gw.url)
        http.post("/_gateway/reset")
        clean = _verdict_cli("--url", gw.url)
    assert live.returncode == 1, live.stderr
    lines = live.stdout.splitlines()
    assert lines[0] == "verdict: 2 logical request(s), 4 attempt(s), 2 finding(s)"
    assert lines[1].startswith("retry_after_ignored: #2 retried #1 (status 429) after ")
    assert lines[2].startswith("  #1 POST /v1/chat/completions model=fail-once-rate-limit-gpt-stub status 429, ")
    assert "retried_non_retryable: #4 retried #3, a 400: the same request fails the same way" in lines
    assert (clean.returncode, clean.stdout) == (0, "verdict: 0 logical request(s), 0 attempt(s), no findings\n")

    from_file = _verdict_cli("--journal", str(sink), "--json")
    assert from_file.returncode == 1, from_file.stderr
    found = json.loads(from_file.stdout)
    assert [(f["check"], [c["seq"] for c in f["calls"]]) for f in found["findings"]] == [
        ("retry_after_ignored", [1, 2]),
        ("retried_non_retryable", [3, 4]),
    ]
    capped = _verdict_cli("--journal", str(sink), "--max-attempts", "1", "--json")
    assert [f["check"] for f in json.loads(capped.stdout)["findings"]] == [
        "retry_after_ignored",
        "retried_non_retryable",
        "retry_storm",
        "retry_storm",
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"seq": 1}\n', "line 1: field 'method' is missing"),
        ("[1, 2]\n", "line 1: expected a journal entry (a JSON object)"),
        ("{nope\n", "line 1: not JSON"),
        (
            '{"seq": 1, "method": "POST", "path": "/v1/chat/completions", "status": 200}\n',
            "field 'started_ns' is missing (a journal from before timed entries?)",
        ),
    ],
)
def test_the_verdict_command_refuses_a_bad_journal_in_one_line(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "calls.jsonl"
    bad.write_text(content)
    result = _verdict_cli("--journal", str(bad))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"evaljig-gateway: verdict: {bad}")
    assert message in result.stderr
    assert "fix: " in result.stderr


def test_the_verdict_command_names_a_missing_file_or_unreachable_server(tmp_path: Path) -> None:
    missing = _verdict_cli("--journal", str(tmp_path / "absent.jsonl"))
    assert (missing.returncode, missing.stderr.count("\n")) == (2, 1)
    assert "absent.jsonl" in missing.stderr
    assert "fix: pass a journal written by 'evaljig-gateway serve --journal'" in missing.stderr
    with Gateway() as gw:
        url = gw.url
    gone = _verdict_cli("--url", url)  # stopped: nothing listens there any more
    assert (gone.returncode, gone.stderr.count("\n")) == (2, 1)
    assert f"{url}/_gateway/calls: cannot read the journal" in gone.stderr
    assert gone.stderr.endswith("; fix: point --url at a running gateway's base URL\n")


def test_the_verdict_command_refuses_a_cap_below_one(tmp_path: Path) -> None:
    journal = tmp_path / "calls.jsonl"
    journal.write_text("")
    result = _verdict_cli("--journal", str(journal), "--max-attempts", "0")
    assert (result.returncode, result.stderr) == (2, "evaljig-gateway: --max-attempts must be at least 1, got 0\n")
    empty = _verdict_cli("--journal", str(journal))
    assert (empty.returncode, empty.stdout) == (0, "verdict: 0 logical request(s), 0 attempt(s), no findings\n")
