"""The recorder's secret scan over real recordings: a foreign upstream leaks the key in spellings the
old scan missed (split across streamed deltas, ``\\u``-escaped inside SSE events, lower-case or
every-byte percent-encoding, MIME base64), and clients send credentials as ``BEARER``/``Token``.
Every such recording is refused at stop, naming the key (never its value), and nothing is written."""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from evaljig_gateway import CassetteError, Gateway, Record, load_cassette

from .openai_upstream import Upstream

KEY_ENV = "EVALJIG_SCAN_TEST_KEY"
KEY = "sk-proj-Scan/Test+Key=0123456789abcdef"
Message = MutableMapping[str, Any]


def _streamed(pieces: list[str], *, escape: bool) -> bytes:
    lines = []
    for piece in pieces:
        event = {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [
            {"index": 0, "delta": {"content": "@@"}, "finish_reason": None}]}  # fmt: skip
        content = "".join(f"\\u{ord(c):04x}" for c in piece) if escape else json.dumps(piece)[1:-1]
        lines.append("data: " + json.dumps(event).replace("@@", content) + "\n\n")
    return ("".join(lines) + "data: [DONE]\n\n").encode()


def _leak(secret: str, how: str) -> tuple[str, bytes]:
    """(content type, body) that gives ``secret`` away the way ``how`` says."""
    if how in ("split", "split-u-escaped"):
        cut = [secret[:6], secret[6:15], secret[15:]]
        return "text/event-stream", _streamed(["Here: ", *cut, " done"], escape=how == "split-u-escaped")
    text = {
        "percent-lower": "".join(f"%{b:02x}" for b in secret.encode()),
        "percent-every-byte": "".join(f"%{b:02X}" for b in secret.encode()),
        "mime-base64": base64.encodebytes(b"log line: " * 4 + b"abcde" + secret.encode()).decode(),  # a break inside
    }[how]
    message = {"role": "assistant", "content": text}
    body = {"id": "c1", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": message, "finish_reason": "stop"}]}  # fmt: skip
    return "application/json", json.dumps(body).encode()


class LeakingUpstream:
    """Answers every chat request by leaking the credential it received, as its model name says."""

    async def __call__(
        self, scope: Message, receive: Callable[[], Awaitable[Message]], send: Callable[[Message], Awaitable[None]]
    ) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        auth = dict(scope["headers"]).get(b"authorization", b"").decode()
        secret = auth.split(" ", 1)[-1]
        content_type, payload = _leak(secret, json.loads(body)["model"])
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-type", content_type.encode())]}
        )
        await send({"type": "http.response.body", "body": payload})


@pytest.fixture(scope="module")
def leaking() -> Any:
    with Upstream(LeakingUpstream()) as up:
        yield up


HOWS = ["split", "split-u-escaped", "percent-lower", "percent-every-byte", "mime-base64"]


@pytest.mark.parametrize("how", HOWS)
def test_the_upstream_key_leaked_in_any_spelling_is_never_written(
    tmp_path: Path, leaking: Upstream, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    cassette = tmp_path / "c.yaml"
    gw = Gateway(tape=Record(cassette, upstream=leaking.base_url, api_key_env=KEY_ENV)).start()
    stream = how.startswith("split")
    answer = httpx.post(f"{gw.base_url}/chat/completions", json={"model": how, "messages": [], "stream": stream})
    assert answer.status_code == 200
    assert KEY not in answer.text  # the leak is in a spelling, never the raw key
    with pytest.raises(CassetteError) as caught:
        gw.stop()
    message = str(caught.value)
    assert f"the upstream key (${KEY_ENV})" in message
    assert KEY not in message
    assert ("deltas joined" in message) == stream
    assert not cassette.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def echoing() -> Any:
    with Upstream() as up:  # answers "Echo: <last user message>"
        yield up


@pytest.mark.parametrize("scheme", ["BEARER", "Token", "bearer", "Bearer", "Api-Key"])
def test_a_client_credential_sent_with_any_scheme_is_never_written(
    tmp_path: Path, echoing: Upstream, scheme: str
) -> None:
    """A user pastes the key into a prompt (so the request and the echoed answer hold it) while the client
    sends it as ``<scheme> <key>``: whatever the scheme's case, the key is what the scan looks for."""
    cassette = tmp_path / "c.yaml"
    client_key = "tok-Client/Secret+Value=42424242"
    gw = Gateway(tape=Record(cassette, upstream=echoing.base_url)).start()
    reply = httpx.post(
        f"{gw.base_url}/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": f"my key is {client_key}"}]},
        headers={"Authorization": f"{scheme} {client_key}"},
    )
    assert reply.status_code == 200
    with pytest.raises(CassetteError) as caught:
        gw.stop()
    assert "a client credential #1" in str(caught.value)
    assert client_key not in str(caught.value)
    assert not cassette.exists()


def test_a_clean_recording_is_written(tmp_path: Path, echoing: Upstream) -> None:
    cassette = tmp_path / "c.yaml"
    with Gateway(tape=Record(cassette, upstream=echoing.base_url)) as gw:
        reply = httpx.post(
            f"{gw.base_url}/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "hello"}], "stream": True},
            headers={"Authorization": "BEARER tok-Client/Secret+Value=42424242"},
        )
        assert reply.status_code == 200
    assert len(load_cassette(cassette)) == 1
