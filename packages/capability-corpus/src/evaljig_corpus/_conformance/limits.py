"""Token limits (``token_limits``): a prompt over the context window, a tokens-per-minute budget spent.

A real server answers the first with OpenAI's 400 ``context_length_exceeded`` (an eval must count
it as an infrastructure error, not a wrong answer) and the second with a 429 carrying
``retry-after`` and the ``x-ratelimit-*-tokens`` headers a client paces itself by. This check
sends the same chat request ``calls`` times and names the first such refusal, with the code and
headers that let a client tell it apart; a target that plays the limits fails it that way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from evaljig_corpus._checks import Checker
from evaljig_corpus._conformance.shared import check_choices, check_head, request_body
from evaljig_corpus._transport import DEFAULT_TIMEOUT, Target, answered, client_for, json_body

PATH = "/chat/completions"
#: What a client needs to wait out a token limit: OpenAI sends all of them on a 429.
RATE_LIMIT_HEADERS = ("retry-after", "x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens")


def assert_token_limits_conformance(
    target: Target,
    *,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None = None,
    max_tokens: int | None = None,
    calls: int = 1,
    timeout: float = DEFAULT_TIMEOUT,
) -> list[dict[str, Any]]:
    """POST the same chat completion ``calls`` times; each must be answered; return the bodies.

    A 400 ``context_length_exceeded`` or a 429 fails the check naming its code and rate-limit
    headers (a 429 missing any of ``RATE_LIMIT_HEADERS`` fails on that instead).
    """
    check = Checker("token_limits")
    if isinstance(calls, bool) or not isinstance(calls, int) or not 1 <= calls <= 100:
        raise TypeError(f"calls must be an integer from 1 to 100, got {calls!r}")
    body = request_body(model=model, messages=messages, max_tokens=max_tokens)
    answers = []
    with client_for(target, timeout) as client:
        for call in range(1, calls + 1):
            response = _post(check, client, body)
            if response.status_code in (400, 429):
                _limit(check, response, call)
            data = json_body(check, answered(check, response, "POST", PATH))
            check_head(check, data, "chat.completion")
            check_choices(check, data, 1)
            answers.append(data)
    return answers


def _post(check: Checker, client: httpx.Client, body: dict[str, Any]) -> httpx.Response:
    try:
        return client.post(PATH, json=body)
    except httpx.HTTPError as exc:
        check.fail("request", f"POST {PATH} failed before a response arrived: {type(exc).__name__}: {exc}")


def _limit(check: Checker, response: httpx.Response, call: int) -> None:
    """Name a 400/429 by its OpenAI error code; a 429 must say when to come back."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError, RecursionError):
        error = None
    error = error if isinstance(error, dict) else {}
    code, message = error.get("code"), str(error.get("message", response.text[:300]))
    status = response.status_code
    if status == 429:
        missing = [h for h in RATE_LIMIT_HEADERS if h not in response.headers]
        if missing:
            check.fail("headers", f"HTTP 429 on call {call} without {', '.join(missing)}", status=status)
        shown = ", ".join(f"{h}: {response.headers[h]}" for h in RATE_LIMIT_HEADERS)
        check.fail("request", f"HTTP 429 on call {call} (code {code!r}; {shown}): {message}", status=status)
    if code == "context_length_exceeded":
        param = error["param"] if isinstance(error.get("param"), str) else "messages"
        check.fail(param, f"HTTP 400 on call {call} (code 'context_length_exceeded'): {message}", status=status)
