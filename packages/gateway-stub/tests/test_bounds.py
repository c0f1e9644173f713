"""Issue 30: hostile schemas, tools and shapes are a 400 naming the place, never a hang, a 500 or a non-instance.

The requests are the held-out probes of the issue (one of them held the gateway until SIGKILL);
each must be answered 400 with the parameter path and the reason. How long they take is the
benchmark's business (``benchmarks/bench_abuse.py``); these tests assert behaviour only (a
client timeout is a failure guard, not a measurement).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from evaljig_gateway import Gateway, Limits, Replay

from .conftest import CHAT

SCHEMA = "response_format.json_schema.schema"


def _structured(schema: Any, **extra: Any) -> dict[str, Any]:
    return {
        "model": "gpt-stub",
        "messages": [{"role": "user", "content": "answer"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}},
        **extra,
    }


#: (schema, the parameter named, words the message holds)
HOSTILE_SCHEMAS = [
    (
        {"type": "string", "pattern": "^(?!(x+x+)+y)(x+x+)+$", "minLength": 60},
        f"{SCHEMA}.pattern",
        "look-ahead is not supported",
    ),
    ({"type": "string", "pattern": "(?<=a)b"}, f"{SCHEMA}.pattern", "look-behind is not supported"),
    ({"type": "string", "pattern": "(a{3000}){3000}"}, f"{SCHEMA}.pattern", "9,000,000 characters"),
    ({"type": "string", "pattern": "a*+b"}, f"{SCHEMA}.pattern", "possessive"),
    ({"type": "string", "pattern": r"\bword\b"}, f"{SCHEMA}.pattern", "word boundaries"),
    ({"type": "string", "pattern": "(unclosed"}, f"{SCHEMA}.pattern", "not a valid regular expression"),
    ({"type": "string", "minLength": 20_000_000}, f"{SCHEMA}.minLength", "--max-generated-chars"),
    ({"type": "object", "minProperties": 1_000_000_000}, f"{SCHEMA}.minProperties", "--max-generated-chars"),
    (
        {"type": "array", "minItems": 400, "items": {"type": "string", "minLength": 100_000}},
        f"{SCHEMA}.items.0.minLength",
        "--max-generated-chars",
    ),
    ({"allOf": [{"const": 1}, {"const": 2}]}, f"{SCHEMA}.allOf", "different constants"),
    ({"allOf": [{"enum": [1, 2]}, {"enum": [3]}]}, f"{SCHEMA}.allOf", "no value in common"),
    ({"enum": [1, 2, 3], "minimum": 10}, f"{SCHEMA}.enum", "no member satisfies"),
    ({"enum": ["a", "bb"], "maxLength": 0}, f"{SCHEMA}.enum", "no member satisfies"),
    ({"const": "abc", "maxLength": 2}, f"{SCHEMA}.const", "does not satisfy"),
    ({"type": "number", "multipleOf": 1e-300, "minimum": 1, "maximum": 1e10}, f"{SCHEMA}.multipleOf", "too small"),
    ({"type": "string", "minLength": 5, "maxLength": 2}, SCHEMA, "below minLength"),
    ({"type": "integer", "minimum": 3, "maximum": 2}, SCHEMA, "no integer between the bounds"),
    ({"not": {"type": "string"}, "type": "string"}, f"{SCHEMA}.not", "should not be valid"),
    ({"type": "string", "pattern": "^a$", "minLength": 3}, f"{SCHEMA}.pattern", "minLength 3"),
]


@pytest.mark.parametrize(("schema", "param", "reason"), HOSTILE_SCHEMAS, ids=[p[2] for p in HOSTILE_SCHEMAS])
def test_a_hostile_or_unsatisfiable_schema_is_a_400_naming_the_place(
    http: httpx.Client, schema: Any, param: str, reason: str
) -> None:
    reply = http.post("/v1/chat/completions", json=_structured(schema), timeout=30)
    assert reply.status_code == 400, reply.text[:500]
    error = reply.json()["error"]
    assert error["param"] == param, error
    assert reason in error["message"], error


def test_enum_members_are_filtered_by_the_keywords_beside_them(http: httpx.Client) -> None:
    """The issue's enum probes gave 3-8 non-instances in 12: now every answer is an instance."""
    schemas = [
        {"enum": [1, 5, 9, 12], "minimum": 6},
        {"enum": ["a", "bbb", "cc"], "maxLength": 2, "minLength": 2},
        {"type": "object", "properties": {"n": {"enum": [0, 3, 7, 8], "multipleOf": 4}}, "required": ["n"]},
    ]
    for schema in schemas:
        for seed in range(6):
            body = _structured(schema, messages=[{"role": "user", "content": f"answer {seed}"}])
            reply = http.post("/v1/chat/completions", json=body)
            assert reply.status_code == 200, reply.text
            jsonschema.validate(json.loads(reply.json()["choices"][0]["message"]["content"]), schema)


def test_a_tiny_multiple_of_is_answered_with_zero_when_zero_is_in_range(http: httpx.Client) -> None:
    reply = http.post("/v1/chat/completions", json=_structured({"type": "number", "multipleOf": 1e-300}))
    assert reply.status_code == 200, reply.text
    assert json.loads(reply.json()["choices"][0]["message"]["content"]) == 0


def test_the_budget_is_shared_by_the_choices_of_a_request() -> None:
    """Each choice's instance fits alone; 64 of them do not: the request is a 400 naming the choice's place."""
    schema = {"type": "string", "minLength": 200}
    with Gateway(limits=Limits(max_generated_chars=4096)) as gw, httpx.Client(base_url=gw.url, timeout=30) as http:
        assert http.post("/v1/chat/completions", json=_structured(schema, n=4)).status_code == 200
        reply = http.post("/v1/chat/completions", json=_structured(schema, n=64))
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["param"] == f"{SCHEMA}.minLength"
    assert "4,096" in error["message"]


def _tool(name: str, parameters: Any = None) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": parameters or {"type": "object"}}}


def test_tool_parameters_name_the_place_in_the_tool_schema(http: httpx.Client) -> None:
    parameters = {"type": "object", "properties": {"code": {"type": "string", "pattern": "(?=x)x"}}}
    body = {**CHAT, "tools": [_tool("f", parameters)], "tool_choice": "required"}
    reply = http.post("/v1/chat/completions", json=body)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["param"] == "tools[0].function.parameters.properties.code.pattern"
    assert "look-ahead is not supported" in error["message"]


def test_more_tools_than_the_limit_is_a_400(http: httpx.Client) -> None:
    tools = [_tool(f"t{i}") for i in range(Limits().max_tools + 1)]
    reply = http.post("/v1/chat/completions", json={**CHAT, "tools": tools})
    assert reply.status_code == 400, reply.text
    assert (reply.json()["error"]["param"], reply.json()["error"]["code"]) == ("tools", "request_too_large")
    reply = http.post("/v1/responses", json={"model": "m", "input": "hi", "tools": [t["function"] for t in tools]})
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["param"] == "tools"


def test_128_tools_and_a_1_mb_message_call_the_tool_it_names(http: httpx.Client) -> None:
    tools = [_tool(f"lookup_{'x' * 40}_{i}") for i in range(128)]
    message = f"please call lookup_{'x' * 40}_77 now. " + ("lookup " + "x " * 40) * (1024 * 1024 // 90)
    body = {"model": "gpt-stub", "messages": [{"role": "user", "content": message}], "tools": tools}
    reply = http.post("/v1/chat/completions", json={**body, "tool_choice": "required"}, timeout=60)
    assert reply.status_code == 200, reply.text[:300]
    calls = reply.json()["choices"][0]["message"]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == [f"lookup_{'x' * 40}_77"]


@pytest.mark.parametrize(
    ("item", "param"),
    [
        ({"type": ["message"], "role": "user", "content": "hi"}, "input[0].type"),
        ({"type": {"a": 1}, "role": "user", "content": "hi"}, "input[0].type"),
        ({"type": "message", "role": ["user"], "content": "hi"}, "input[0].role"),
        ({"type": "message", "role": "user", "content": 7}, "input[0].content"),
        (
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ["x"]}]},
            "input[0].content[0].text",
        ),
        ({"type": "message", "role": "user", "content": ["x"]}, "input[0].content[0]"),
        ({"type": "function_call_output", "call_id": "c", "output": {"x": 1}}, "input[0].output"),
        ({"type": "function_call", "call_id": "c", "name": ["f"], "arguments": "{}"}, "input[0].name"),
    ],
)
def test_malformed_responses_input_items_are_a_400_naming_the_field(
    http: httpx.Client, item: dict[str, Any], param: str
) -> None:
    reply = http.post("/v1/responses", json={"model": "m", "input": [item]})
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["param"] == param


def test_malformed_chat_content_parts_are_a_400_naming_the_field(http: httpx.Client) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": [["deep"]]}]}]}
    reply = http.post("/v1/chat/completions", json=body)
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["param"] == "messages[0].content[0].text"


def test_a_replayed_request_nested_500_deep_is_a_400() -> None:
    cassette = Path(__file__).parent / "cassettes" / "multiple_choice.yaml"
    nested: Any = "x"
    for _ in range(500):
        nested = [nested]
    with Gateway(tape=Replay(cassette)) as gw, httpx.Client(base_url=gw.url, timeout=30) as http:
        reply = http.post("/v1/chat/completions", json={**CHAT, "metadata_x": nested})
        assert reply.status_code == 400, reply.text[:300]
        assert "nests deeper than 100 levels" in reply.json()["error"]["message"]
        assert [c.status for c in gw.calls()] == [400]


def test_sigterm_stops_the_gateway_after_the_hostile_requests() -> None:
    """The request that once needed SIGKILL, and the others, then SIGTERM: the process exits cleanly."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "evaljig_gateway", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[1]
        statuses: list[int] = []

        def send(schema: Any) -> None:
            try:
                statuses.append(httpx.post(f"{url}/chat/completions", json=_structured(schema), timeout=60).status_code)
            except httpx.HTTPError:
                statuses.append(0)

        senders = [threading.Thread(target=send, args=(schema,)) for schema, _, _ in HOSTILE_SCHEMAS[:9]]
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join(60)
        assert statuses == [400] * len(senders)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)  # a failure guard: a hung gateway never gets here
        assert proc.returncode == 0, err
        assert out.strip() == f"stopped after {len(senders)} call(s)"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


MALFORMED_SCHEMAS = [
    {"$schema": 5, "type": "integer"},
    {"type": "string", "minLength": "a"},
    {"minimum": "x"},
    {"allOf": 5},
    {"multipleOf": 0},
    {"not": 5},
    {"if": 5},
    {"pattern": 5},
    {"$dynamicRef": "#x"},
    {"type": "integer", "minimum": 1e300},
    {"type": "object", "patternProperties": {"^a": {"type": "integer"}}, "required": ["a"]},
    {"type": "object", "properties": {"a": {}}, "required": ["a"], "propertyNames": {"pattern": "^b"}},
]


@pytest.mark.parametrize("schema", MALFORMED_SCHEMAS, ids=[json.dumps(s)[:40] for s in MALFORMED_SCHEMAS])
def test_a_malformed_or_unsupported_schema_is_an_instance_or_a_400(http: httpx.Client, schema: Any) -> None:
    reply = http.post("/v1/chat/completions", json=_structured(schema))
    if reply.status_code == 200:
        value = json.loads(reply.json()["choices"][0]["message"]["content"])
        draft = schema if isinstance(schema.get("$schema", ""), str) else {}
        jsonschema.validators.validator_for(draft, default=jsonschema.Draft202012Validator)(schema).validate(value)
    else:
        assert reply.status_code == 400, reply.text
        assert reply.json()["error"]["param"].startswith(SCHEMA)
