"""A spent retry budget names the error codes the gateway answered: lighteval retries a 400 without a word."""

from __future__ import annotations

from evaljig_fixtures._lev_harness import answered_errors
from evaljig_gateway import Journal


def test_error_answers_with_a_code_are_counted_most_first() -> None:
    journal = Journal()
    for status, code in [(400, "context_length_exceeded")] * 3 + [
        (200, None),
        (429, "rate_limit_exceeded"),
        (500, None),
    ]:
        journal.record("POST", "/v1/chat/completions", "m", status, 1, b"{}", error_code=code)
    assert answered_errors(journal.calls()) == "3 x 400 context_length_exceeded, 1 x 429 rate_limit_exceeded"


def test_no_coded_error_says_nothing() -> None:
    journal = Journal()
    journal.record("POST", "/v1/chat/completions", "m", 500, 1, b"{}")
    journal.record("POST", "/v1/chat/completions", "m", 200, 2, b"{}")
    assert answered_errors(journal.calls()) == ""
