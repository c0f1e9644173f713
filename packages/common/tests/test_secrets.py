"""The one secret scan: every spelling of a key is found, mixed spellings too, and a key split across a
streamed answer's deltas is found once the deltas are joined."""

from __future__ import annotations

import base64
import json
import re
from urllib.parse import quote

import pytest

from evaljig_common import credential_params, credential_values, find_secret, joined_streams, secret_spellings

KEY = "sk-live/Ab+Cd=Ef_0123456789xyz"  # '/', '+', '=' and '_': every encoding changes something
SECRETS = {"the upstream key ($OPENAI_API_KEY)": KEY}
AROUND = b'{"note": "some text before"}\nline two: '


def lower_hex(encoded: str) -> str:
    return re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded)


@pytest.mark.parametrize(("form", "text"), secret_spellings(KEY), ids=lambda v: str(v)[:40])
def test_every_spelling_planted_is_found(form: str, text: str) -> None:
    hit = find_secret(AROUND + text.encode() + b" and after\n", SECRETS)
    assert hit is not None, form
    assert hit.label == "the upstream key ($OPENAI_API_KEY)"
    assert hit.line == 2
    assert KEY not in repr(hit)


def test_the_spellings_cover_what_the_issue_lists() -> None:
    forms = {form for form, _ in secret_spellings(KEY)}
    assert {"as is", "JSON-escaped", "JSON-escaped (\\u)", "URL-encoded", "URL-encoded (every byte)"} <= forms
    assert {"base64", "base64 (MIME)"} <= forms
    assert "base64 (URL-safe)" in {form for form, _ in secret_spellings("k?>~k?>~k?>~k?>~")}  # its base64 has + and /
    texts = [text for _, text in secret_spellings(KEY)]
    assert KEY.replace("/", "\\/") in texts
    assert lower_hex(quote(KEY, safe="")) in texts
    assert any(t.startswith("%73%6b") for t in texts)
    assert any(t.startswith("%73%6B") for t in texts)


@pytest.mark.parametrize(
    "planted",
    [
        KEY[:10].encode() + b"".join(b"\\u%04x" % ord(c) for c in KEY[10:]),  # half \u-escaped
        "".join(f"%{b:02x}" if i % 2 else chr(b) for i, b in enumerate(KEY.encode())).encode(),  # mixed percent
        lower_hex(quote(KEY, safe="")).encode(),
        json.dumps({"k": KEY}).replace("/", "\\/").encode(),
        base64.encodebytes(b"x" * 70 + KEY.encode() + b"y" * 90),  # MIME: a line break inside the key's bytes
        base64.encodebytes(b"x" * 70 + KEY.encode()).replace(b"\n", b"\r\n"),
        json.dumps(base64.encodebytes(b"xy" * 37 + KEY.encode()).decode()).encode(),  # MIME inside a JSON string
        b"Authorization: Basic " + base64.b64encode(b"user:" + KEY.encode()),
        b"    " + base64.b64encode(b"zz" + KEY.encode())[:30] + b"\n    " + base64.b64encode(b"zz" + KEY.encode())[30:],
    ],
    ids=[
        "u-escaped",
        "percent-mixed",
        "percent-lower",
        "json-slash",
        "mime",
        "mime-crlf",
        "mime-in-json",
        "basic",
        "yaml-block",
    ],
)
def test_mixed_and_wrapped_spellings_are_found(planted: bytes) -> None:
    assert find_secret(AROUND + planted + b"\n", SECRETS) is not None


def test_clean_data_and_no_secret_find_nothing() -> None:
    clean = AROUND + b"sk-live/Ab+Cd=Ef_012345678 base64 and %41 and \\u0041\n" + base64.encodebytes(b"x" * 200)
    assert find_secret(clean, SECRETS) is None
    assert find_secret(AROUND + KEY.encode(), {}) is None


def _chat_stream(pieces: list[str], *, escape: bool = False) -> bytes:
    events = [{"id": "c", "choices": [{"index": 0, "delta": {"content": piece}}]} for piece in pieces]
    lines = [json.dumps(e, ensure_ascii=True) for e in events]
    if escape:  # every character of the content as \uXXXX, as some servers send
        lines = [
            json.dumps({"id": "c", "choices": [{"index": 0, "delta": {"content": "@@"}}]}).replace(
                "@@", "".join(f"\\u{ord(c):04x}" for c in piece)
            )
            for piece in pieces
        ]
    return "".join(f"data: {line}\n\n" for line in lines).encode() + b"data: [DONE]\n\n"


@pytest.mark.parametrize("escape", [False, True], ids=["plain", "u-escaped"])
def test_a_key_split_across_chat_deltas_is_found_once_joined(escape: bool) -> None:
    stream = _chat_stream(["Your key is ", KEY[:7], KEY[7:15], KEY[15:], "."], escape=escape)
    assert KEY.encode() not in stream
    hit = find_secret(b"interactions:\n" + stream, SECRETS)
    assert hit is not None
    assert hit.joined
    assert hit.line == 2
    assert "deltas joined" in hit.where


@pytest.mark.parametrize(
    "events",
    [
        [{"choices": [{"index": 0, "text": KEY[:9]}]}, {"choices": [{"index": 0, "text": KEY[9:]}]}],
        [
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"k": "' + KEY[:5]}}]},
                    }
                ]
            },
            {
                "choices": [
                    {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": KEY[5:] + '"}'}}]}}
                ]
            },
        ],
        [
            {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": KEY[:12]},
            {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": KEY[12:]},
        ],
        [  # two choices interleaved: each is joined on its own
            {"choices": [{"index": 0, "delta": {"content": KEY[:10]}}]},
            {"choices": [{"index": 1, "delta": {"content": "other"}}]},
            {"choices": [{"index": 0, "delta": {"content": KEY[10:]}}]},
        ],
    ],
    ids=["completions", "tool-arguments", "responses", "interleaved-choices"],
)
def test_every_kind_of_stream_is_joined(events: list[dict[str, object]]) -> None:
    stream = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()
    assert find_secret(stream, SECRETS) is not None
    assert any(KEY in text for _, text in joined_streams(stream))


def test_streams_are_not_joined_across_done() -> None:
    stream = _chat_stream([KEY[:10]]) + _chat_stream([KEY[10:]])
    assert find_secret(stream, SECRETS) is None


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (f"Bearer {KEY}", [KEY]),
        (f"BEARER {KEY}", [KEY]),
        (f"bearer   {KEY}  ", [KEY]),
        (f"Token {KEY}", [KEY]),
        (KEY, [KEY]),
        (
            "Basic " + base64.b64encode(f"me:{KEY}".encode()).decode(),
            [base64.b64encode(f"me:{KEY}".encode()).decode(), f"me:{KEY}", KEY],
        ),
        ("", []),
    ],
)
def test_credential_headers_are_read_whatever_the_scheme_case(header: str, expected: list[str]) -> None:
    assert credential_values(header) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("api_key=1&key=2&token=3&apikey=4", ["api_key", "key", "token", "apikey"]),
        ("Api-Key=1&ACCESS_TOKEN=2&access-token=3", ["Api-Key", "ACCESS_TOKEN", "access-token"]),
        ("api%5Fkey=1&sig=2&sv=2024-01-01&signature=3", ["api_key", "sig", "signature"]),  # percent-decoded names
        ("auth=&password=x&secret=y&x=1", ["auth", "password", "secret"]),  # a blank value still names one
        ("key=1&key=2", ["key"]),
        ("max_tokens=5&keys=1&tokenizer=x&monkey=1", []),  # whole names only
        ("", []),
    ],
)
def test_credential_params_name_what_carries_a_credential_however_spelled(query: str, expected: list[str]) -> None:
    assert credential_params(query) == expected
