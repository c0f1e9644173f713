"""Large request bodies: their syntax is checked in steps before orjson parses them (``_json_body``)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from evaljig_gateway import Gateway
from evaljig_gateway._errors import GatewayError
from evaljig_gateway._json_body import LARGE_BODY_BYTES, SCAN_STEP_BYTES, parse_json_work

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def _run(raw: bytes, check_above: int = LARGE_BODY_BYTES) -> tuple[str, Any, int]:
    """("ok", the value, steps taken) or ("refused", the error code, steps taken before the refusal)."""
    work, steps = parse_json_work(raw, check_above), 0
    while True:
        try:
            next(work)
        except StopIteration as done:
            return "ok", done.value, steps
        except GatewayError as refused:
            return "refused", refused.code, steps
        steps += 1


def test_a_large_body_broken_at_its_start_is_refused_in_the_first_step() -> None:
    """3 MiB of ``{xxx...``: orjson held the loop ~2 ms for it; yajl refuses it within one 16 KiB step."""
    assert _run(b"{" + b"x" * (3 * 1024 * 1024)) == ("refused", "invalid_json", 0)


def test_a_large_body_is_checked_a_step_at_a_time_then_parsed_by_orjson() -> None:
    value = {"model": "m", "messages": [{"role": "user", "content": "word " * 200_000}]}
    raw = orjson.dumps(value)
    steps = -(-len(raw) // SCAN_STEP_BYTES)
    assert _run(raw) == ("ok", value, steps)
    assert _run(raw[:-1]) == ("refused", "invalid_json", steps)  # broken at its end: found by the last step
    assert _run(raw, check_above=len(raw)) == ("ok", value, 0)  # a body at the threshold: orjson at once


@settings(max_examples=300, deadline=None)
@given(value=JSON, cut=st.integers(0, 40), junk=st.binary(max_size=3))
def test_the_stepped_path_accepts_and_refuses_exactly_what_orjson_does(value: Any, cut: int, junk: bytes) -> None:
    text = json.dumps(value, ensure_ascii=False).encode()
    for raw in (text, text[: max(0, len(text) - cut)] + junk, junk + text):
        try:
            expected: tuple[str, Any] = ("ok", orjson.loads(raw))
        except orjson.JSONDecodeError:
            expected = ("refused", "invalid_json")
        assert _run(raw, check_above=0)[:2] == expected, raw


def test_the_gateway_refuses_a_large_malformed_body_with_400(gateway: Gateway) -> None:
    raw = b'{"model": "m", "messages": ' + b"[" * 10 + b"x" * (LARGE_BODY_BYTES + 1)
    with httpx.Client(base_url=gateway.url) as http:
        reply = http.post("/v1/chat/completions", content=raw, headers={"content-type": "application/json"})
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == "invalid_json"
    assert [c.status for c in gateway.calls()] == [400]
