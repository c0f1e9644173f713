"""A small OpenAI-compatible chat server that is *not* evaljig's gateway, for record/replay proofs.

It stands in for a team's real model: its answer to a multiple-choice prompt is the letter a
stable hash of the prompt picks (so scores are neither 0 nor 1 and differ from the gateway's
answer-key answers), and its ids and timestamps are its own. It shares no code with
``evaljig_gateway``: a cassette recorded from it proves the gateway replays someone else's answers.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

import uvicorn

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

LETTERS = "ABCD"


def pick(prompt: str) -> str:
    """The letter this "model" answers: the prompt's SHA-256, modulo the four choices."""
    return LETTERS[hashlib.sha256(prompt.encode()).digest()[0] % len(LETTERS)]


def _completion(body: dict[str, Any], served: int) -> dict[str, Any]:
    prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    answer = pick(prompt)
    return {
        "id": f"indep-{served:06d}",
        "object": "chat.completion",
        "created": 1_800_000_000 + served,
        "model": body.get("model", "unknown"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": len(prompt.split()),
            "completion_tokens": 1,
            "total_tokens": len(prompt.split()) + 1,
        },
    }


class IndependentUpstream:
    """``POST /v1/chat/completions`` only; anything else is a 404 in OpenAI's error shape."""

    def __init__(self) -> None:
        self.served = 0
        self.authorizations: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        headers = dict(scope["headers"])
        self.authorizations.append(headers.get(b"authorization", b"").decode())
        if scope["path"] == "/v1/chat/completions" and scope["method"] == "POST":
            self.served += 1
            status, payload = 200, _completion(json.loads(b"".join(chunks)), self.served)
        else:
            status, payload = 404, {"error": {"message": "not here", "type": "invalid_request_error"}}
        data = json.dumps(payload).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": data})


@contextmanager
def independent_upstream() -> Iterator[tuple[str, IndependentUpstream]]:
    """Serve an :class:`IndependentUpstream` on 127.0.0.1; yields (its OpenAI base URL, the app)."""
    app = IndependentUpstream()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the independent upstream did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1", app
    finally:
        server.should_exit = True
        thread.join(timeout=10)
