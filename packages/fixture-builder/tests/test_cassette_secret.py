"""``recording`` refuses a cassette that gives the api key away in any spelling, a streamed answer's
deltas joined: here the gateway streams an answer holding the key, cut into tokens across events."""

from __future__ import annotations

import base64
from pathlib import Path

import httpx
import pytest

from evaljig_fixtures import recording
from evaljig_gateway import Gateway

KEY = "sk-fixture/Secret+Key=987654321"
QUESTION = "What is the key?"


def record(cassette: Path, gw: Gateway, *, stream: bool) -> str:
    with recording(cassette, gw.base_url, secret=KEY):
        reply = httpx.post(
            f"{gw.base_url}/chat/completions",
            json={"model": "gpt-stub", "messages": [{"role": "user", "content": QUESTION}], "stream": stream},
        )
    return reply.text


@pytest.mark.parametrize(
    ("answer", "stream"),
    [
        (f"The key is {KEY}.", True),  # split across deltas: no event holds it whole
        (base64.encodebytes(b"header: " * 5 + b"abcde" + KEY.encode()).decode(), False),  # MIME, a break inside it
        ("".join(f"%{b:02x}" for b in KEY.encode()), False),  # every byte percent-encoded, lower case
    ],
    ids=["split-deltas", "mime-base64", "percent-every-byte"],
)
def test_a_cassette_holding_the_key_in_any_spelling_is_not_written(tmp_path: Path, answer: str, stream: bool) -> None:
    cassette = tmp_path / "c.yaml"
    with Gateway(answers={QUESTION: answer}) as gw:
        assert (
            KEY
            not in httpx.post(
                f"{gw.base_url}/chat/completions",
                json={"model": "gpt-stub", "messages": [{"role": "user", "content": QUESTION}], "stream": stream},
            ).text
        )  # no answer holds the key as is
        with pytest.raises(RuntimeError, match="refusing to write a cassette that contains the api key") as caught:
            record(cassette, gw, stream=stream)
    assert KEY not in str(caught.value)
    assert not cassette.exists()


def test_a_clean_cassette_is_written(tmp_path: Path) -> None:
    cassette = tmp_path / "c.yaml"
    with Gateway(answers={QUESTION: "No secret here."}) as gw:
        record(cassette, gw, stream=True)
    assert "secret" in cassette.read_text()
