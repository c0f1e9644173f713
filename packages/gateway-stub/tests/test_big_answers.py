"""Big answers: made by the plain handlers and sent whole, byte for byte what the handler made."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from evaljig_gateway import Gateway, Limits, _chat, _completions, _embeddings
from evaljig_gateway._content import AnswerKey
from evaljig_gateway._request import Request


def _request(body: dict[str, Any]) -> Request:
    raw = orjson.dumps(body)
    return Request(raw, body, body["model"], AnswerKey(), Limits())


def test_an_echo_past_the_default_limit_is_answered_whole_when_raised() -> None:
    body = {"model": "m", "echo": True, "logprobs": 5, "max_tokens": 1, "prompt": "w " * 26_000, "n": 2}
    raised = Limits(max_echo_tokens=256 * 1024)  # past the default (sized to evals): an operator raised it
    reply = _completions.handle(Request(orjson.dumps(body), body, "m", AnswerKey(), raised))
    choices = orjson.loads(reply.content)["choices"]
    for choice in choices:  # the echoed prompt's tokens, then the completion's, as one column
        assert "".join(choice["logprobs"]["tokens"]) == choice["text"]
        assert len(choice["logprobs"]["tokens"]) == len(choice["logprobs"]["token_logprobs"]) > 26_000


BIG = [
    ("/v1/embeddings", {"model": "embed", "input": ["x"] * 16, "dimensions": 8192, "encoding_format": "base64"}),
    ("/v1/chat/completions", {**{"messages": [{"role": "user", "content": "hi"}]}, "model": "m", "n": 64,
                              "logprobs": True, "top_logprobs": 20}),
    ("/v1/completions", {"model": "m", "prompt": ["p q"] * 2048}),
]  # fmt: skip


@pytest.mark.parametrize(("path", "body"), BIG, ids=["embeddings", "chat-logprobs", "completions"])
def test_a_big_answer_arrives_whole_over_http(gateway: Gateway, http: httpx.Client, path: str, body: Any) -> None:
    handler = {
        "/v1/embeddings": _embeddings.handle,
        "/v1/chat/completions": _chat.handle,
        "/v1/completions": _completions.handle,
    }[path]
    expected = handler(_request(body))
    reply = http.post(path, content=orjson.dumps(body), headers={"content-type": "application/json"}, timeout=60)
    assert reply.status_code == 200
    assert int(reply.headers["content-length"]) == len(reply.content)
    assert reply.content == expected.content


def test_a_malformed_big_answer_is_cut_in_half(gateway: Gateway, http: httpx.Client) -> None:
    body = {"model": "malformed", "input": ["x"] * 16, "dimensions": 8192, "encoding_format": "base64"}
    whole = _embeddings.handle(_request(body)).content
    reply = http.post("/v1/embeddings", json=body, timeout=60)
    assert reply.status_code == 200
    assert reply.content == whole[: len(whole) // 2]
