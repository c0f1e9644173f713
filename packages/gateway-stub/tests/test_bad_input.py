"""Bad input is answered (400/404/405/413), journaled, and never takes the server down."""

from __future__ import annotations

import httpx
import pytest

from evaljig_gateway import Gateway

from .conftest import CHAT


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


def test_unknown_path_is_404(http: httpx.Client, gateway: Gateway) -> None:
    response = http.get("/v2/nothing")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert [(c.path, c.status) for c in gateway.calls()] == [("/v2/nothing", 404)]


def test_wrong_method_is_405(http: httpx.Client) -> None:
    assert http.get("/v1/chat/completions").status_code == 405


def test_body_over_the_limit_is_413() -> None:
    with Gateway(max_body_bytes=1024) as small, httpx.Client(base_url=small.url) as http:
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

    with Gateway(max_body_bytes=1024) as small, httpx.Client(base_url=small.url) as http:
        assert http.post("/v1/chat/completions", content=chunks()).status_code == 413
