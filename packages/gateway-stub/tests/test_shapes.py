"""Response shapes pinned in golden/gateway-stub/test_shapes/ (they are fully deterministic)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from evaljig_gateway import Gateway

Q = [{"role": "user", "content": "What is the capital of France?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}},
        },
    }
]

CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "chat": ("/v1/chat/completions", {"model": "gpt-stub", "messages": Q}),
    "chat_logprobs": (
        "/v1/chat/completions",
        {"model": "gpt-stub", "messages": Q, "logprobs": True, "top_logprobs": 2, "max_tokens": 3},
    ),
    "chat_tool_call": ("/v1/chat/completions", {"model": "gpt-stub", "messages": Q, "tools": TOOLS}),
    "completion": ("/v1/completions", {"model": "gpt-stub", "prompt": "Say hi", "logprobs": 1, "max_tokens": 4}),
    "embedding": ("/v1/embeddings", {"model": "embed-stub", "input": ["a", "b"], "dimensions": 3}),
    "response": ("/v1/responses", {"model": "gpt-stub", "input": "Say hi"}),
    "error_always_fail": ("/v1/chat/completions", {"model": "always-fail", "messages": Q}),
    "error_rate_limit": ("/v1/chat/completions", {"model": "rate-limit", "messages": Q}),
    "error_missing_messages": ("/v1/chat/completions", {"model": "gpt-stub"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_response_shape(http: httpx.Client, golden: object, case: str) -> None:
    path, body = CASES[case]
    response = http.post(path, json=body)
    interesting = {"content-type"} | {h for h in response.headers if h.startswith(("retry-after", "x-ratelimit"))}
    assert golden == {
        "status": response.status_code,
        "headers": {k: v for k, v in sorted(response.headers.items()) if k in interesting},
        "body": response.json(),
    }


def test_stream_shape(http: httpx.Client, golden: object) -> None:
    body = {
        "model": "gpt-stub",
        "messages": Q,
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 3,
    }
    response = http.post("/v1/chat/completions", json=body)
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.text.endswith("data: [DONE]\n\n")
    assert golden == response.text


def test_models_shape(http: httpx.Client, golden: object) -> None:
    assert golden == http.get("/v1/models").json()


def test_journal_entry_shape(http: httpx.Client, gateway: Gateway, golden: object) -> None:
    http.post("/v1/chat/completions", json={"model": "fail-once", "messages": Q})
    assert golden == [c.as_dict() for c in gateway.calls()]
