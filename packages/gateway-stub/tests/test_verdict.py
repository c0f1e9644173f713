"""The verdict on a client's retries (issue 31 item 3), on synthetic journals with fixed times.

Every timing fact here is written down, never measured: the checks' arithmetic is what is tested.
``test_verdict_http.py`` runs real clients against a real gateway.
"""

from __future__ import annotations

from typing import Any

import pytest

from evaljig_gateway import CHECKS, Call, Journal, VerdictInputError, assert_resilient, judge

MS = 1_000_000  # ns
CHAT = "/v1/chat/completions"


def entry(
    seq: int,
    start_ms: float,
    status: int,
    *,
    question: str = "q1",
    took_ms: float = 1,
    retry_after_ms: int | None = None,
    cut: bool = False,
) -> dict[str, Any]:
    """A journal entry as ``GET /_gateway/calls`` and ``--journal`` give it."""
    body = {"model": "gpt-stub", "messages": [{"role": "user", "content": question}]}
    return {
        "seq": seq,
        "method": "POST",
        "path": CHAT,
        "model": "gpt-stub",
        "status": status,
        "attempt": seq,
        "body": body,
        "body_size": 0,
        "body_truncated": False,
        "started_ns": int(start_ms * MS),
        "ended_ns": int((start_ms + took_ms) * MS),
        "wall_time": 1_700_000_000.0 + start_ms / 1000,
        "retry_after_ms": retry_after_ms,
        "cut": cut,
    }


def checks_of(journal: list[dict[str, Any]], **options: Any) -> list[tuple[str, list[int]]]:
    return [(f.check, [a.seq for a in f.calls]) for f in judge(journal, **options).findings]


def test_a_retry_sooner_than_retry_after_is_found_with_its_calls() -> None:
    journal = [entry(1, 0, 429, retry_after_ms=2000), entry(2, 2, 200)]
    verdict = judge(journal)
    assert [(f.check, [a.seq for a in f.calls]) for f in verdict.findings] == [("retry_after_ignored", [1, 2])]
    assert verdict.findings[0].message == "#2 retried #1 (status 429) after 1.0 ms; Retry-After asked for 2000 ms"
    assert (verdict.requests, verdict.attempts, verdict.passed) == (1, 2, False)


def test_a_retry_after_the_asked_wait_is_fine() -> None:
    assert checks_of([entry(1, 0, 429, retry_after_ms=2000), entry(2, 2001, 200)]) == []
    # 10 ms of clock slack, no more
    assert checks_of([entry(1, 0, 429, retry_after_ms=2000), entry(2, 1992, 200)]) == []
    assert checks_of([entry(1, 0, 429, retry_after_ms=2000), entry(2, 1980, 200)]) == [("retry_after_ignored", [1, 2])]


def test_retrying_a_400_is_found_but_a_new_request_after_it_is_not() -> None:
    assert checks_of([entry(1, 0, 400), entry(2, 5, 400)]) == [("retried_non_retryable", [1, 2])]
    assert checks_of([entry(1, 0, 400), entry(2, 5, 200, question="q2")]) == []
    # a 429, a 408 and a client that gave up (499) may be retried
    for status in (408, 429, 499):
        assert checks_of([entry(1, 0, status), entry(2, 500, 200)]) == []


def test_attempts_past_the_cap_are_a_retry_storm() -> None:
    waits = [100 * 2**i for i in range(11)]  # backing off from 100 ms, so only the count is wrong
    journal, start = [], 0.0
    for seq, wait in enumerate(waits, start=1):
        journal.append(entry(seq, start, 500 if seq < 11 else 200))
        start += 1 + wait
    assert checks_of(journal) == [("retry_storm", list(range(1, 12)))]
    (storm,) = judge(journal).findings
    assert storm.message == "11 attempts at one request (cap 10): " + ", ".join(f"#{n}" for n in range(1, 12))
    many = [entry(n, n * 1000.0 * 2**n, 500) for n in range(1, 20)]  # backing off, 19 attempts
    (long,) = judge(many).findings
    assert long.message.endswith("#11, #12, …")
    assert len(long.calls) == 19
    assert checks_of(journal, max_attempts=11) == []
    assert checks_of(journal[:3], max_attempts=2) == [("retry_storm", [1, 2, 3])]


def test_retrying_at_once_or_at_a_constant_interval_is_no_backoff() -> None:
    at_once = [entry(1, 0, 500), entry(2, 1, 500), entry(3, 2, 200)]
    assert checks_of(at_once) == [("no_backoff", [1, 2, 3])]
    constant = [entry(1, 0, 500), entry(2, 501, 500), entry(3, 1002, 200)]
    assert checks_of(constant) == [("no_backoff", [1, 2, 3])]
    growing = [entry(1, 0, 500), entry(2, 501, 500), entry(3, 1502, 200)]
    assert checks_of(growing) == []
    one_retry = [entry(1, 0, 500), entry(2, 1, 200)]  # one wait says nothing about backing off
    assert checks_of(one_retry) == []


def test_waits_a_retry_after_asked_for_are_not_judged_as_backoff() -> None:
    asked = [entry(1, 0, 429, retry_after_ms=100), entry(2, 101, 429, retry_after_ms=100), entry(3, 202, 200)]
    assert checks_of(asked) == []


def test_moving_on_from_a_cut_answer_is_found_retrying_it_is_not() -> None:
    accepted = [entry(1, 0, 200, cut=True), entry(2, 5, 200, question="q2")]
    assert checks_of(accepted) == [("truncated_stream_accepted", [1, 2])]
    retried = [entry(1, 0, 200, cut=True), entry(2, 5, 200), entry(3, 10, 200, question="q2")]
    assert checks_of(retried) == []
    last = [entry(1, 0, 200, question="q2"), entry(2, 5, 200, cut=True)]  # nothing after it: no evidence
    assert checks_of(last) == []


def test_identical_requests_side_by_side_are_separate_requests() -> None:
    """Two copies sent together, both failing: neither is the other's retry (it had not ended)."""
    journal = [entry(1, 0, 400, took_ms=50), entry(2, 10, 400, took_ms=50)]
    verdict = judge(journal)
    assert (verdict.requests, verdict.findings) == (2, ())


def test_a_success_is_never_retried_so_a_repeat_is_a_new_request() -> None:
    journal = [entry(1, 0, 200), entry(2, 1, 200), entry(3, 2, 200)]
    assert judge(journal).requests == 3
    assert checks_of(journal) == []


def test_findings_are_listed_by_check_then_calls_and_checks_can_be_chosen() -> None:
    journal = [
        entry(1, 0, 400, question="a"),
        entry(2, 1, 400, question="a"),
        entry(3, 2, 429, question="b", retry_after_ms=1000),
        entry(4, 4, 200, question="b"),
    ]
    assert checks_of(journal) == [("retry_after_ignored", [3, 4]), ("retried_non_retryable", [1, 2])]
    assert checks_of(journal, checks=["retried_non_retryable"]) == [("retried_non_retryable", [1, 2])]
    assert checks_of(journal, checks="retry_after_ignored") == [("retry_after_ignored", [3, 4])]


def test_assert_resilient_lists_every_finding_and_passes_a_clean_journal() -> None:
    bad = [entry(1, 0, 429, retry_after_ms=2000), entry(2, 3, 400), entry(3, 4, 400)]
    with pytest.raises(AssertionError) as caught:
        assert_resilient(bad)
    text = str(caught.value)
    assert "retry_after_ignored: #2 retried #1 (status 429) after 2.0 ms; Retry-After asked for 2000 ms" in text
    assert "retried_non_retryable: #3 retried #2, a 400" in text
    assert "  #1 POST /v1/chat/completions model=gpt-stub status 429, retry-after 2000 ms at +0.0 ms .. +1.0 ms" in text
    assert assert_resilient([entry(1, 0, 429, retry_after_ms=20), entry(2, 30, 200)]).passed


def test_the_verdict_as_json_is_the_same_for_the_same_journal() -> None:
    journal = [entry(1, 1000, 429, retry_after_ms=2000), entry(2, 1002, 200)]
    first = judge(journal).as_dict()
    assert first == judge(list(reversed(journal))).as_dict()  # the journal's order is the time order
    assert first == {
        "passed": False,
        "requests": 1,
        "attempts": 2,
        "findings": [
            {
                "check": "retry_after_ignored",
                "message": "#2 retried #1 (status 429) after 1.0 ms; Retry-After asked for 2000 ms",
                "calls": [
                    {"seq": 1, "status": 429, "model": "gpt-stub", "started_ms": 0.0, "ended_ms": 1.0,
                     "retry_after_ms": 2000, "cut": False},
                    {"seq": 2, "status": 200, "model": "gpt-stub", "started_ms": 2.0, "ended_ms": 3.0,
                     "retry_after_ms": None, "cut": False},
                ],
            }
        ],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ({"started_ns": None}, "journal: entry 2: field 'started_ns' has the wrong type (NoneType)"),
        ({"ended_ns": "5"}, "journal: entry 2: field 'ended_ns' has the wrong type (str)"),
        ({"status": True}, "journal: entry 2: field 'status' has the wrong type (bool)"),
        ({"ended_ns": 0}, "journal: entry 2: field 'ended_ns' is before 'started_ns'"),
        ({"retry_after_ms": "2"}, "journal: entry 2: field 'retry_after_ms' has the wrong type (str)"),
    ],
)
def test_a_bad_entry_names_the_entry_and_the_field(broken: dict[str, Any], message: str) -> None:
    journal = [entry(1, 0, 200), {**entry(2, 5, 200), **broken}]
    with pytest.raises(VerdictInputError) as caught:
        judge(journal)
    assert str(caught.value) == message


def test_an_untimed_journal_and_unknown_checks_are_refused() -> None:
    old = {key: value for key, value in entry(1, 0, 200).items() if not key.endswith("_ns")}
    with pytest.raises(VerdictInputError, match=r"entry 1: field 'started_ns' is missing \(a journal from before"):
        judge([old])
    with pytest.raises(VerdictInputError, match=r"unknown check\(s\) retry_everything; the checks are: retry_after"):
        judge([], checks=["retry_everything"])
    with pytest.raises(VerdictInputError, match="max_attempts must be at least 1"):
        judge([], max_attempts=0)
    with pytest.raises(VerdictInputError, match="entry 1: expected a journal entry, got int"):
        judge([3])  # type: ignore[arg-type]
    assert set(CHECKS) == {
        "retry_after_ignored",
        "retried_non_retryable",
        "retry_storm",
        "no_backoff",
        "truncated_stream_accepted",
    }


def test_a_hand_built_call_is_not_timed_and_is_refused_but_a_journal_is_judged() -> None:
    with pytest.raises(VerdictInputError, match=r"journal: call #7 is not timed \(ended_ns 0\)"):
        judge([Call(7, "POST", CHAT, "m", 200, 1, b"{}")])
    journal = Journal()
    journal.record("POST", CHAT, "m", 400, 0, b'{"model": "m"}', started_ns=0)
    journal.record("POST", CHAT, "m", 400, 0, b'{"model": "m"}')  # starts (and ends) now: after the first ended
    assert [(f.check, [a.seq for a in f.calls]) for f in judge(journal).findings] == [("retried_non_retryable", [1, 2])]
