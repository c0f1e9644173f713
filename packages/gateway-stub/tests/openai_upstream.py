"""A small OpenAI-compatible server that is not evaljig's gateway: the upstream the recording tests record from.

Plain ASGI under uvicorn on 127.0.0.1, written from the OpenAI API reference and sharing no
code with evaljig_gateway, so a cassette recorded from it proves recording works from a
foreign server. It accepts any model name and answers deterministically:

* chat (plain and streamed, ``stream_options.include_usage`` honoured): a multiple-choice
  prompt (lines ``A. ...``, ``B. ...``) is answered with the letter :func:`pick_letter` gives
  its question (a stable hash), anything else with ``Echo: <last user message>``;
* completions with ``logprobs`` (and ``echo``): whitespace tokens, log-probabilities from a
  hash of each token;
* embeddings: 8 values per input from a hash of it;
* ``GET /v1/models``.

Test hooks by model name: ``upstream-500`` / ``upstream-429`` / ``upstream-401`` answer that
error, ``echo-auth`` answers with the Authorization header it received (a secret leak for the
secret scan to catch). Every request's headers are kept in :attr:`Upstream.seen`.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from types import TracebackType
from typing import Any, Self

import uvicorn

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

CREATED = 1_700_000_000
_CHOICE_LINE = re.compile(r"^\s*([A-Z])[.)]\s+\S", re.MULTILINE)


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def pick_letter(question: str, letters: str) -> str:
    """The letter this server answers for a multiple-choice ``question`` offering ``letters`` (a stable hash)."""
    return letters[_digest(question) % len(letters)]


def chat_answer(messages: list[dict[str, Any]]) -> str:
    """What the server says to a conversation: a letter for a multiple-choice prompt, else an echo."""
    user = [m for m in messages if m.get("role") == "user"]
    content = user[-1].get("content", "") if user else ""
    if isinstance(content, list):  # content parts
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    letters = "".join(_CHOICE_LINE.findall(content))
    if len(letters) >= 2:
        question = content[: _CHOICE_LINE.search(content).start()].strip()  # type: ignore[union-attr]
        return pick_letter(question, letters)
    return f"Echo: {content}"


def _tokens(text: str) -> list[str]:
    return re.findall(r"\s*\S+", text) or [text]


def _logprob(token: str) -> float:
    return -round((_digest(token) % 5000) / 1000 + 0.001, 6)


def _vector(text: str) -> list[float]:
    return [(_digest(f"{text}{k}") % 2000 - 1000) / 1000 for k in range(8)]


class UpstreamApp:
    """The ASGI app; ``seen`` collects each request's (path, headers) for assertions."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, str]]] = []
        self._count = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.seen.append((scope["path"], headers))
        self._count += 1
        path = scope["path"]
        if scope["method"] == "GET" and path == "/v1/models":
            await _json(send, 200, {"object": "list", "data": [{"id": "any", "object": "model", "created": CREATED}]})
            return
        try:
            body = json.loads(b"".join(chunks))
        except ValueError:
            await _json(send, 400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
            return
        model = str(body.get("model", ""))
        if model.startswith("upstream-") and model[9:].isdigit():
            status = int(model[9:])
            extra = [(b"retry-after", b"1"), (b"x-ratelimit-remaining-requests", b"0")] if status == 429 else []
            await _json(send, status, {"error": {"message": f"upstream says {status}", "type": "x"}}, extra)
            return
        handler = {
            "/v1/chat/completions": self._chat,
            "/v1/completions": self._completions,
            "/v1/embeddings": self._embeddings,
        }.get(path)
        if handler is None:
            await _json(send, 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}})
            return
        await handler(body, headers, send)

    async def _chat(self, body: dict[str, Any], headers: dict[str, str], send: Send) -> None:
        model = str(body.get("model", ""))
        text = headers.get("authorization", "") if model == "echo-auth" else chat_answer(body.get("messages", []))
        ident = f"chatcmpl-{_digest(json.dumps(body, sort_keys=True)) % 10**12:012d}"
        usage = {"prompt_tokens": 10, "completion_tokens": len(_tokens(text)), "total_tokens": 10 + len(_tokens(text))}
        if not body.get("stream"):
            message = {"role": "assistant", "content": text}
            choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}
            answer = {"id": ident, "object": "chat.completion", "created": CREATED, "model": model}
            await _json(send, 200, {**answer, "choices": [choice], "usage": usage}, [(b"x-request-id", b"up-1")])
            return
        base = {"id": ident, "object": "chat.completion.chunk", "created": CREATED, "model": model}
        events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
        events += [{**base, "choices": [{"index": 0, "delta": {"content": t}}]} for t in _tokens(text)]
        events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append({**base, "choices": [], "usage": usage})
        payload = b"".join(b"data: " + json.dumps(e).encode() + b"\r\n\r\n" for e in events) + b"data: [DONE]\r\n\r\n"
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        half = len(payload) // 2  # two chunks: the recorder must reassemble events across them
        await send({"type": "http.response.body", "body": payload[:half], "more_body": True})
        await send({"type": "http.response.body", "body": payload[half:]})

    async def _completions(self, body: dict[str, Any], headers: dict[str, str], send: Send) -> None:
        prompts = body.get("prompt", "")
        prompts = prompts if isinstance(prompts, list) else [prompts]
        choices = []
        for index, prompt in enumerate(prompts):
            completion = " yes"
            tokens = (_tokens(str(prompt)) if body.get("echo") else []) + [completion]
            choice: dict[str, Any] = {"index": index, "text": (str(prompt) if body.get("echo") else "") + completion}
            if body.get("logprobs") is not None:
                offsets, at = [], 0
                for token in tokens:
                    offsets.append(at)
                    at += len(token)
                choice["logprobs"] = {
                    "tokens": tokens,
                    "token_logprobs": [_logprob(t) for t in tokens],
                    "top_logprobs": [{t: _logprob(t)} for t in tokens],
                    "text_offset": offsets,
                }
            else:
                choice["logprobs"] = None
            choice["finish_reason"] = "length"
            choices.append(choice)
        answer = {"id": "cmpl-1", "object": "text_completion", "created": CREATED, "model": body.get("model")}
        await _json(send, 200, {**answer, "choices": choices, "usage": {"prompt_tokens": 1, "total_tokens": 2}})

    async def _embeddings(self, body: dict[str, Any], headers: dict[str, str], send: Send) -> None:
        inputs = body.get("input", "")
        inputs = inputs if isinstance(inputs, list) else [inputs]
        data = [{"object": "embedding", "index": i, "embedding": _vector(str(x))} for i, x in enumerate(inputs)]
        usage = {"prompt_tokens": 1, "total_tokens": 1}
        await _json(send, 200, {"object": "list", "data": data, "model": body.get("model"), "usage": usage})


async def _json(send: Send, status: int, payload: Any, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    headers += [(b"set-cookie", b"session=abc"), (b"openai-organization", b"org-upstream"), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


class Upstream:
    """``with Upstream() as up: up.base_url`` — the server on 127.0.0.1 in a background thread.

    ``Upstream(app)`` serves another ASGI app the same way (a hostile or gated upstream of a test).
    """

    def __init__(self, app: Any = None) -> None:
        self.app = UpstreamApp() if app is None else app
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def seen(self) -> list[tuple[str, dict[str, str]]]:
        return self.app.seen

    def __enter__(self) -> Self:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        self.port = sock.getsockname()[1]
        # a short graceful shutdown: a test's endless stream must not hold the exit for long
        config = uvicorn.Config(
            self.app, lifespan="off", log_level="warning", access_log=False, timeout_graceful_shutdown=1
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the upstream did not start")
            time.sleep(0.005)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)


def main() -> None:
    """``python openai_upstream.py``: serve until interrupted, printing the base URL (for manual runs)."""
    with Upstream() as up:
        print(up.base_url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
