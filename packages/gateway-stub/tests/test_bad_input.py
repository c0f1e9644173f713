"""Bad input is answered (400/404/405/413), journaled, and never takes the server down."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from evaljig_gateway import AnswerKey, Gateway, Journal, Limits

from .conftest import CHAT


def with_tool(parameters: dict[str, Any]) -> bytes:
    """A chat body offering one function whose ``parameters`` schema is given."""
    return json.dumps(
        {**CHAT, "tools": [{"type": "function", "function": {"name": "f", "parameters": parameters}}]}
    ).encode()


def nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "array", "items": schema}
    return schema


PARAMS = "tools[0].function.parameters"


@pytest.mark.parametrize(
    ("path", "body", "status", "param"),
    [
        ("/v1/chat/completions", b"{not json", 400, None),
        ("/v1/chat/completions", b"[1, 2]", 400, None),
        ("/v1/chat/completions", b'{"messages": [{"role": "user", "content": "x"}]}', 400, "model"),
        ("/v1/chat/completions", b'{"model": "", "messages": []}', 400, "model"),
        ("/v1/chat/completions", b'{"model": "m"}', 400, "messages"),
        ("/v1/chat/completions", b'{"model": "m", "messages": []}', 400, "messages"),
        (
            "/v1/chat/completions",
            b'{"model": "m", "messages": [{"role": "robot", "content": "x"}]}',
            400,
            "messages[0].role",
        ),
        ("/v1/chat/completions", b'{"model": "m", "messages": [{"role": "user"}]}', 400, "messages[0].content"),
        (  # a list or an object as the role was a TypeError answered 500, which the OpenAI SDK retries
            "/v1/chat/completions",
            b'{"model": "m", "messages": [{"role": "user", "content": "x"}, {"role": ["user"], "content": "y"}]}',
            400,
            "messages[1].role",
        ),
        (
            "/v1/chat/completions",
            b'{"model": "m", "messages": [{"role": {"name": "user"}, "content": "x"}]}',
            400,
            "messages[0].role",
        ),
        ("/v1/chat/completions", b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "n": 0}', 400, "n"),
        (
            "/v1/chat/completions",
            b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "top_logprobs": 2}',
            400,
            "top_logprobs",
        ),
        ("/v1/completions", b'{"model": "m"}', 400, "prompt"),
        ("/v1/embeddings", b'{"model": "m", "input": 5}', 400, "input"),
        ("/v1/embeddings", b'{"model": "m", "input": "x", "dimensions": 0}', 400, "dimensions"),
        ("/v1/responses", b'{"model": "m"}', 400, "input"),
        ("/v1/chat/completions", with_tool({"type": "object", "properties": [1, 2]}), 400, f"{PARAMS}.properties"),
        (
            "/v1/chat/completions",
            with_tool({"type": "object", "properties": {"xs": {"type": "array", "items": [{"type": "string"}]}}}),
            400,
            f"{PARAMS}.properties.xs.items",
        ),
        ("/v1/chat/completions", with_tool(nested(300)), 400, PARAMS + ".items" * 32),
    ],
)
def test_invalid_requests_name_the_field(
    http: httpx.Client, gateway: Gateway, path: str, body: bytes, status: int, param: str | None
) -> None:
    response = http.post(path, content=body, headers={"content-type": "application/json"})
    assert response.status_code == status
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    if param:
        assert param in error["message"]
    [call] = gateway.calls()
    assert (call.path, call.status) == (path, status)
    assert http.post("/v1/chat/completions", json=CHAT).status_code == 200  # still serving


def test_the_deepest_allowed_tool_schema_is_answered(http: httpx.Client) -> None:
    response = http.post("/v1/chat/completions", content=with_tool(nested(31)))  # 32 levels with the string
    assert response.status_code == 200
    arguments = json.loads(response.json()["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])
    assert json.dumps(arguments).count("[") == 31


class _BrokenAnswerKey(AnswerKey):
    def lookup(self, prompt: str) -> str | None:
        raise RuntimeError("a bug in the gateway")


def test_an_unexpected_error_is_an_openai_500_and_journaled(http: httpx.Client, gateway: Gateway) -> None:
    gateway.set_answers(_BrokenAnswerKey())
    response = http.post("/v1/chat/completions", json=CHAT)
    assert response.status_code == 500
    assert response.json() == {
        "error": {
            "message": "The server had an error while processing your request"
            " (evaljig gateway: unexpected RuntimeError).",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }
    assert [(c.path, c.model, c.status) for c in gateway.calls()] == [("/v1/chat/completions", "gpt-stub", 500)]
    gateway.set_answers(None)
    assert http.post("/v1/chat/completions", json=CHAT).status_code == 200  # still serving


def test_a_body_too_deep_to_write_back_is_journaled_as_text(tmp_path: Path) -> None:
    deep = json.dumps({**CHAT, "metadata": {"x": json.loads("[" * 300 + "]" * 300)}})  # orjson reads 1024, writes 255
    sink = tmp_path / "calls.jsonl"
    with Gateway(journal=Journal(sink=sink)) as gw, httpx.Client(base_url=gw.url) as http:
        assert http.post("/v1/chat/completions", content=deep).status_code == 200
        assert http.post("/v1/chat/completions", json=CHAT).status_code == 200
        listed = http.get("/_gateway/calls")
        assert listed.status_code == 200
        bodies = [c["body"] for c in listed.json()["calls"]]
    assert bodies == [deep, CHAT]
    rows = [json.loads(line) for line in sink.read_text().splitlines()]
    assert [r["body"] for r in rows] == bodies


def test_unknown_path_is_404(http: httpx.Client, gateway: Gateway) -> None:
    response = http.get("/v2/nothing")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert [(c.path, c.status) for c in gateway.calls()] == [("/v2/nothing", 404)]


def test_wrong_method_is_405(http: httpx.Client) -> None:
    assert http.get("/v1/chat/completions").status_code == 405


def test_body_over_the_limit_is_413() -> None:
    with Gateway(limits=Limits(max_body_bytes=1024)) as small, httpx.Client(base_url=small.url) as http:
        big = {**CHAT, "messages": [{"role": "user", "content": "x" * 2000}]}
        response = http.post("/v1/chat/completions", json=big)
        assert response.status_code == 413
        assert "1024 bytes" in response.json()["error"]["message"]
        assert [c.status for c in small.calls()] == [413]
        assert http.post("/v1/chat/completions", json=CHAT).status_code == 200


def test_chunked_body_over_the_limit_is_413() -> None:
    def chunks():  # no content-length: the limit is enforced while reading
        yield b'{"model": "m", "messages": [{"role": "user", "content": "'
        yield b"x" * 4096
        yield b'"}]}'

    with Gateway(limits=Limits(max_body_bytes=1024)) as small, httpx.Client(base_url=small.url) as http:
        assert http.post("/v1/chat/completions", content=chunks()).status_code == 413
