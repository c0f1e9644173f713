"""``@pytest.mark.evaljig_cassette``: the ``gateway`` fixture replays a committed cassette, rewound per test.

``cassettes/multiple_choice.yaml`` was recorded from ``openai_upstream`` by :func:`record` (the
last test re-records it and compares bytes: recording is deterministic and the file is current).
"""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from evaljig_gateway import Gateway, Record

from .conftest import openai_client
from .openai_upstream import Upstream, pick_letter

CASSETTE = Path(__file__).parent / "cassettes" / "multiple_choice.yaml"
QUESTIONS = ["Which planet is largest?", "Which gas do plants take in?"]
CHOICES = "\nA. one\nB. two\nC. three\nD. four"


def _ask(client: openai.OpenAI, question: str, model: str = "gpt-x") -> str | None:
    messages = [{"role": "user", "content": question + CHOICES}]
    return client.chat.completions.create(model=model, messages=messages, temperature=0).choices[0].message.content  # type: ignore[arg-type]


def record(path: Path) -> None:
    """(Re-)record the committed cassette from the independent upstream."""
    with (
        Upstream() as up,
        Gateway(tape=Record(path, upstream=up.base_url)) as gw,
        openai.OpenAI(base_url=gw.base_url, api_key="sk-none", max_retries=0) as client,
    ):
        for question in QUESTIONS:
            _ask(client, question)


@pytest.mark.evaljig_cassette("cassettes/multiple_choice.yaml")
def test_the_marker_hands_a_replaying_gateway(gateway: Gateway) -> None:
    client = openai_client(gateway.base_url, api_key="sk-none", max_retries=0)
    assert [_ask(client, q) for q in QUESTIONS] == [pick_letter(q, "ABCD") for q in QUESTIONS]
    assert gateway.tape is not None
    assert gateway.tape.path == CASSETTE


@pytest.mark.evaljig_cassette("cassettes/multiple_choice.yaml")
def test_each_test_starts_rewound_with_fresh_attempts(gateway: Gateway) -> None:
    client = openai_client(gateway.base_url, api_key="sk-none", max_retries=1)
    assert _ask(client, QUESTIONS[0], "fail-once-gpt-x") == pick_letter(QUESTIONS[0], "ABCD")
    assert [c.status for c in gateway.calls()] == [500, 200]


@pytest.mark.evaljig_cassette("cassettes/multiple_choice.yaml")
def test_a_question_not_recorded_is_a_miss(gateway: Gateway) -> None:
    client = openai_client(gateway.base_url, api_key="sk-none", max_retries=0)
    with pytest.raises(openai.NotFoundError, match="Cassette miss: "):
        _ask(client, "Which metal is liquid?")


def test_without_the_marker_the_gateway_is_synthetic(gateway: Gateway) -> None:
    assert gateway.tape is None


def test_the_committed_cassette_is_what_the_upstream_records(tmp_path: Path) -> None:
    fresh = tmp_path / "multiple_choice.yaml"
    record(fresh)
    assert fresh.read_bytes() == CASSETTE.read_bytes()


MISSING_TEST = """
import json, urllib.error, urllib.request
import pytest


class RetryBudgetExhausted(RuntimeError):
    pass


def ask(gateway, question):
    body = {"model": "gpt-x", "messages": [{"role": "user", "content": question}], "temperature": 0}
    request = urllib.request.Request(gateway.base_url + "/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(request).read()
    except urllib.error.HTTPError:
        raise RetryBudgetExhausted("retry budget of 2 attempt(s) exhausted; last error: None") from None


@pytest.mark.evaljig_cassette(CASSETTE)
def test_hits_a_miss(gateway):
    ask(gateway, "Which metal is liquid?")


@pytest.mark.evaljig_cassette(CASSETTE)
def test_fails_for_its_own_reason(gateway):
    assert 1 == 2
"""


def test_a_test_that_hit_a_miss_fails_with_the_miss_explanation_first(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever the client made of the 404 (a retry error, an empty answer), the failure's first line is the miss."""
    monkeypatch.setenv("COLUMNS", "400")  # the short summary line is not cut
    pytester.makepyfile(test_inner=MISSING_TEST.replace("CASSETTE", repr(str(CASSETTE))))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rf")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "FAILED test_inner.py::test_hits_a_miss - evaljig_gateway.CassetteMiss: Cassette miss: POST "
            "/v1/chat/completions differs from the closest recording, interactions[[]*] (* of * fields alike): *",
            "FAILED test_inner.py::test_fails_for_its_own_reason - assert 1 == 2",
        ]
    )
    result.stdout.fnmatch_lines(["*RetryBudgetExhausted: retry budget of 2 attempt(s)*"])  # the cause is kept below
