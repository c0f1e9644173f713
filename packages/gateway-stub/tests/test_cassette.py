"""The cassette format on its own: readable YAML, stable bytes, one clear error per bad file, no secret written."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from evaljig_gateway import (
    DEFAULT_IGNORED_FIELDS,
    CassetteError,
    Exchange,
    _cassette,
    base_model,
    load_cassette,
    match_key,
    write_cassette,
)
from evaljig_gateway._cassette import dump_cassette, kept_headers, pretty_json, sse_text

KEY = "sk-live-0123456789abcdefXYZ"
SECRETS = {"the upstream key ($UPSTREAM_KEY)": KEY}


def _exchange(content: str = "hi", answer: str = "hello", path: str = "/v1/chat/completions") -> Exchange:
    request = pretty_json({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}]})
    body = pretty_json({"id": "x", "choices": [{"message": {"role": "assistant", "content": answer}}]})
    return Exchange("POST", path, request, 200, (("content-type", "application/json"),), body, "OK")


def test_bodies_are_pretty_literal_blocks_and_only_client_headers_are_kept(tmp_path: Path) -> None:
    headers = kept_headers(
        [
            ("Content-Type", "application/json"),
            ("Set-Cookie", "s=1"),
            ("openai-organization", "org-1"),
            ("x-request-id", "req_1"),
            ("Retry-After", "2"),
            ("X-RateLimit-Remaining-Requests", "7"),
        ]
    )
    assert headers == (
        ("content-type", "application/json"),
        ("retry-after", "2"),
        ("x-ratelimit-remaining-requests", "7"),
    )
    stream = sse_text(b'data: {"a":1}\r\n\r\ndata: [DONE]\r\n\r\n')
    sse = (("content-type", "text/event-stream"),)
    streamed = Exchange("POST", "/v1/chat/completions", "{}", 200, sse, stream, "OK")
    text = dump_cassette([_exchange(), streamed]).decode()
    assert '    body: |-\n      {\n        "model": "gpt-4o-mini",\n' in text
    assert '      string: |+\n        data: {"a":1}\n\n        data: [DONE]\n' in text
    assert "uri: http://127.0.0.1:8000/v1/chat/completions" in text
    document = yaml.safe_load(text)
    assert document["version"] == 1
    assert document["interactions"][0]["request"]["headers"] == {"content-type": ["application/json"]}
    path = tmp_path / "c.yaml"
    path.write_text(text)
    assert load_cassette(path) == [_exchange(), streamed]


def test_same_exchanges_same_bytes(tmp_path: Path) -> None:
    exchanges = [_exchange("a"), _exchange("b", "ünïcode ✓")]
    first, second = tmp_path / "1.yaml", tmp_path / "2.yaml"
    write_cassette(first, exchanges)
    write_cassette(second, list(exchanges))
    assert first.read_bytes() == second.read_bytes()
    assert load_cassette(first) == exchanges


def test_strings_a_block_would_change_round_trip(tmp_path: Path) -> None:
    odd = Exchange("POST", "/v1/x", "{}", 200, (("content-type", "text/plain"),), "a\r\nb\u2028c \nd")
    path = tmp_path / "c.yaml"
    write_cassette(path, [odd])
    assert load_cassette(path)[0].body == odd.body


def test_a_loaded_cassette_whose_request_body_is_only_whitespace_writes_back(tmp_path: Path) -> None:
    """The loader takes a blank request body (a GET has none; whitespace is none either), so writing the
    same exchanges back must too: the credentials-by-name check reads only a body that holds JSON."""
    path = tmp_path / "c.yaml"
    write_cassette(path, [Exchange("GET", "/v1/models", "", 200, (("content-type", "application/json"),), "{}")])
    path.write_text(path.read_text().replace("body: null", "body: '  '"), encoding="utf-8")
    (blank,) = load_cassette(path)
    assert blank.request_body == "  "
    write_cassette(tmp_path / "again.yaml", [blank])
    assert load_cassette(tmp_path / "again.yaml") == [blank]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_any_text_round_trips_and_the_bytes_do_not_depend_on_libyaml(text: str) -> None:
    """PyYAML's own emitter writes every cassette: libyaml's picks other styles (no block holding an
    emoji), so a machine without it would write other bytes; and whatever the text, both loaders
    (libyaml's and PyYAML's) read it back exactly (U+0085 is escaped, not read back as a line break)."""
    body = json.dumps({"content": text}, indent=2, ensure_ascii=False)
    data = dump_cassette([Exchange("POST", "/v1/x", body, 200, (("content-type", "application/json"),), body)])
    pure = yaml.dump(yaml.safe_load(data), Dumper=_PurePython, sort_keys=False, allow_unicode=True, width=1 << 30)
    assert data == pure.encode()
    for loader in {yaml.SafeLoader, getattr(yaml, "CSafeLoader", yaml.SafeLoader)}:
        interaction = yaml.load(data, Loader=loader)["interactions"][0]
        assert interaction["request"]["body"] == body
        assert interaction["response"]["body"]["string"] == body


class _PurePython(yaml.SafeDumper):
    """The reference: PyYAML's own emitter with the cassette's string styles."""


_PurePython.add_representer(str, _cassette._represent_str)


def test_match_key_ignores_order_whitespace_ignored_fields_and_behaviour_tokens() -> None:
    compact = json.loads('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"temperature":0}')
    other = json.loads('{ "user": "u1", "temperature": 0.0, "messages": [{"content": "hi", "role": "user"}],\n'
                       ' "model": "fail-once-gpt-4o-mini", "stream_options": {"include_usage": true} }')  # fmt: skip
    path = "/v1/chat/completions"
    assert match_key("POST", path, compact) == match_key("post", path, other)
    assert match_key("POST", path, compact) != match_key("POST", path, {**compact, "temperature": 0.5})
    assert match_key("POST", path, compact) != match_key("POST", path, other, frozenset())
    assert match_key("POST", path, compact) != match_key("POST", f"{path}?x=1", compact)
    assert {"stream_options", "user", "metadata"} == DEFAULT_IGNORED_FIELDS


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("fail-once-gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o-mini-slow-50", "gpt-4o-mini"),
        ("openai/fail-2-rate-limit-gpt", "openai/gpt"),
        ("a-stall-b", "a-b"),
        ("MALFORMED_gpt", "gpt"),
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("fail-once", ""),
    ],
)
def test_base_model_strips_behaviour_tokens(name: str, base: str) -> None:
    assert base_model(name) == base


# --- bad cassettes: one clear error naming the file, the entry and the field ------------------------------------


def _good() -> dict[str, object]:
    return yaml.safe_load(dump_cassette([_exchange("a"), _exchange("b")]))  # type: ignore[no-any-return]


def _broken(tmp_path: Path, edit: object) -> Path:
    document = _good()
    edit(document)  # type: ignore[operator]
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["interactions"][1]["response"]["status"].update(code="abc"),
            "interactions[1].response.status.code: expected an integer, got 'abc'",
        ),
        (lambda d: d["interactions"][0]["request"].pop("uri"), "interactions[0].request.uri: missing"),
        (lambda d: d["interactions"][1].pop("response"), "interactions[1].response: missing"),
        (
            lambda d: d["interactions"][1]["request"].update(body="{not json"),
            "interactions[1].request.body: not JSON",
        ),
        (
            lambda d: d["interactions"][0]["response"]["body"].update(string="{truncated"),
            "interactions[0].response.body.string: content-type is JSON but the body is not",
        ),
        (lambda d: d["interactions"][0].update(request=["x"]), "interactions[0].request: expected a mapping"),
        (
            lambda d: d["interactions"][0]["request"].update(uri="http://h/other"),
            "interactions[0].request.uri: expected a URI under /v1/",
        ),
        (lambda d: d.update(interactions={"a": 1}), "interactions: expected a list"),
    ],
)
def test_a_corrupt_cassette_names_file_entry_and_field(tmp_path: Path, edit: object, message: str) -> None:
    path = _broken(tmp_path, edit)
    with pytest.raises(CassetteError) as caught:
        load_cassette(path)
    assert str(caught.value).startswith(f"{path}: {message}")
    assert "\n" not in str(caught.value)


def test_bad_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("interactions:\n- request: {method: POST\n  response: x\n")
    with pytest.raises(CassetteError, match=rf"^{path}: line \d+, column \d+: not valid YAML"):
        load_cassette(path)


def test_a_cassette_over_the_size_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    write_cassette(path, [_exchange("x" * 5000)])
    size = path.stat().st_size
    with pytest.raises(CassetteError, match=rf"{size:,} bytes, over the limit of 1,000 bytes"):
        load_cassette(path, max_bytes=1000)
    target = tmp_path / "new.yaml"
    with pytest.raises(CassetteError, match="over the limit of 1,000 bytes"):
        write_cassette(target, [_exchange("x" * 5000)], max_bytes=1000)
    assert not target.exists()


# --- secrets: nothing is written, the previous file stays -------------------------------------------------------


def _b64_in_basic(value: str) -> str:
    return base64.b64encode(f"user:{value}".encode()).decode()


@pytest.mark.parametrize(
    ("answer", "form"),
    [
        (f"the key is {KEY}", "as is"),
        (f"url {quote('k=' + KEY + '/')}", "as is"),
        (base64.b64encode(KEY.encode()).decode(), "base64"),
        (f"Basic {_b64_in_basic(KEY)}", "base64"),
        (base64.urlsafe_b64encode(b"??>" + KEY.encode()).decode(), "base64"),
    ],
)
def test_a_secret_in_any_form_is_never_written(tmp_path: Path, answer: str, form: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"previous")
    with pytest.raises(CassetteError) as caught:
        write_cassette(path, [_exchange(answer=answer)], secrets=SECRETS)
    message = str(caught.value)
    assert "the upstream key ($UPSTREAM_KEY)" in message
    assert form in message
    assert KEY not in message
    assert path.read_bytes() == b"previous"
    assert [p.name for p in tmp_path.iterdir()] == ["c.yaml"]  # no temporary file left


def test_an_url_encoded_key_is_found() -> None:
    special = "sk+key/with=odd&chars"
    with pytest.raises(CassetteError, match="URL-encoded"):
        write_cassette(Path("/nonexistent/never.yaml"), [_exchange(answer=quote(special, safe=""))],
                       secrets={"k": special})  # fmt: skip


def test_credentials_by_name_in_query_or_body_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    with pytest.raises(CassetteError, match=r"interactions\[0\].request.uri has a query parameter 'api-key'"):
        write_cassette(path, [_exchange(path="/v1/chat/completions?api-key=abc")])
    body = pretty_json({"model": "m", "extra": {"api_key": "abc"}})
    leaky = Exchange("POST", "/v1/chat/completions", body, 200, (), "{}")
    with pytest.raises(CassetteError, match=r"interactions\[0\].request.body has a field 'api_key'"):
        write_cassette(path, [leaky])
    assert not path.exists()


@pytest.mark.parametrize(
    ("query", "name"),
    [("sig=abc&sv=2024", "sig"), ("API%5FKEY=abc", "API_KEY"), ("x=1&Access-Token=abc", "Access-Token")],
)
def test_a_credential_parameter_from_the_shared_list_is_refused_however_spelled(
    tmp_path: Path, query: str, name: str
) -> None:
    """The list and the reading a provider spec's base_url gets (evaljig-common's credential_params)."""
    with pytest.raises(CassetteError, match=rf"request.uri has a query parameter '{name}' \(credentials"):
        write_cassette(tmp_path / "c.yaml", [_exchange(path=f"/v1/chat/completions?{query}")])
    assert not (tmp_path / "c.yaml").exists()
