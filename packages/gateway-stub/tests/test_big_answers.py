"""Big answers are made, written and sent in short steps, byte for byte what one orjson call writes.

The gateway's latency under abuse (``nox -s bench``) depends on no step of a heavy request holding
the event loop for long: not the last item's dump, not joining megabytes into one body, not cutting
a long prompt into tokens. These tests pin the shapes that keep steps short; the bench measures them.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaljig_gateway import Gateway, Limits, _completions, _content, _logprobs, _openai_api, _tokenizer
from evaljig_gateway._content import AnswerKey
from evaljig_gateway._replies import CHUNK_BYTES, ArrayBody, Joined, Reply, dumps_work
from evaljig_gateway._work import Work, drain

_int64 = st.integers(-(2**63), 2**63 - 1)  # what orjson writes
_scalars = st.none() | st.booleans() | _int64 | st.floats(allow_nan=False) | st.text()
_small = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
#: Items as a response holds them: small ones, and ones with a list long enough to be written in steps.
_items = st.lists(
    st.one_of(_small, st.fixed_dictionaries({"values": st.lists(_int64, min_size=513, max_size=1200)})),
    max_size=8,
)


def _written(head: dict[str, Any], key: str, items: list[Any], tail: dict[str, Any], stepwise: bool) -> Reply:
    body = ArrayBody(head, key)
    for item in items:
        if stepwise:
            drain(body.add_work(item))
        else:
            body.add(orjson.dumps(item))
    return body.reply(tail)


# big items by design (lists long enough to be written in steps): hypothesis's size health check
# tripped under a loaded xdist worker
@settings(
    max_examples=40, derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.data_too_large]
)
@given(
    head=st.dictionaries(st.text(max_size=5), _small, max_size=3),
    items=_items,
    tail=st.dictionaries(st.text(max_size=5), _small, max_size=3),
    stepwise=st.booleans(),
)
def test_an_array_body_is_byte_for_byte_orjson(
    head: dict[str, Any], items: list[Any], tail: dict[str, Any], stepwise: bool
) -> None:
    key = "choices"
    head, tail = {k: v for k, v in head.items() if k != key}, {k: v for k, v in tail.items() if k not in head}
    tail.pop(key, None)
    reply = _written(head, key, items, tail, stepwise)
    assert reply.content == orjson.dumps({**head, key: items, **tail})


def test_a_big_array_body_is_kept_in_chunks_never_one_long_bytes() -> None:
    items = [{"embedding": "x" * 40_000, "index": i} for i in range(64)]  # 2.5 MB, like 64 x 8192 base64
    reply = _written({"object": "list"}, "data", items, {"model": "m"}, stepwise=False)
    assert reply.body == b""
    assert reply.chunks is not None
    assert len(reply.chunks) > 16
    assert max(map(len, reply.chunks)) < 2 * CHUNK_BYTES
    assert reply.content == orjson.dumps({"object": "list", "data": items, "model": "m"})


def test_a_small_array_body_is_one_bytes() -> None:
    reply = _written({"id": "x"}, "choices", [{"index": 0}], {"usage": {}}, stepwise=True)
    assert reply.chunks is None
    assert reply.body == orjson.dumps({"id": "x", "choices": [{"index": 0}], "usage": {}})


@settings(max_examples=60, derandomize=True, database=None, deadline=None)
@given(parts=st.lists(st.lists(st.one_of(_int64, st.none(), st.text(max_size=3)), max_size=1200), max_size=4))
def test_joined_lists_are_written_as_their_concatenation(parts: list[list[Any]]) -> None:
    concatenated = [item for part in parts for item in part]
    joined = Joined(*parts)
    assert joined == concatenated
    assert len(joined) == len(concatenated)
    as_choice = {"logprobs": {"tokens": joined}, "index": 0}
    assert drain(dumps_work(as_choice)) == orjson.dumps({"logprobs": {"tokens": concatenated}, "index": 0})
    as_event = {"choices": [as_choice]}  # a streamed echo: the choice sits in a short list
    written = orjson.dumps({"choices": [{"logprobs": {"tokens": concatenated}, "index": 0}]})
    assert drain(dumps_work(as_event)) == written


_text = st.text(alphabet=st.sampled_from(list("ab é1.,!?  \t\n\u00a0\u2003\u0085-_")), max_size=400)


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(text=_text, step=st.integers(1, 16))
def test_text_pieces_in_steps_are_the_pieces_of_one_call(text: str, step: int) -> None:
    default, _tokenizer.TEXT_STEP = _tokenizer.TEXT_STEP, step  # cuts every few characters
    try:
        assert drain(_logprobs.text_pieces_work(text)) == _logprobs.text_pieces(text)
        assert drain(_content.count_tokens_work(text)) == len(_logprobs.text_pieces(text))
    finally:
        _tokenizer.TEXT_STEP = default


def _steps(work: Work[Any]) -> int:
    return sum(1 for _ in work)


def test_a_long_text_is_cut_into_pieces_in_steps() -> None:
    text = "w " * 26_000  # the echo at the limit: 52,000 characters
    assert _steps(_logprobs.text_pieces_work(text)) >= len(text) // _tokenizer.TEXT_STEP


def test_thousands_of_text_prompts_are_read_in_steps() -> None:
    assert _steps(_completions.prompts_of({"prompt": ["p q"] * 4096})) >= 4096 // _completions.PROMPT_STEP


def test_an_embedding_is_normalised_in_steps() -> None:
    made = _steps(_content.embedding_work("m", "x", 8192))
    assert made >= 2 * 8192 // _content.VALUE_STEP  # drawn, then normalised, a step per VALUE_STEP values
    assert _content.embedding("m", "x", 8192) == drain(_content.embedding_work("m", "x", 8192))


def _request(body: dict[str, Any]) -> _openai_api.Request:
    raw = orjson.dumps(body)
    return _openai_api.Request(raw, body, body["model"], AnswerKey(), Limits())


def test_an_echo_at_the_limit_is_answered_in_chunks() -> None:
    body = {"model": "m", "echo": True, "logprobs": 5, "max_tokens": 1, "prompt": "w " * 26_000, "n": 2}
    raised = Limits(max_echo_tokens=256 * 1024)  # past the default (sized to evals): an operator raised it
    reply = drain(_completions.completions(_openai_api.Request(orjson.dumps(body), body, "m", AnswerKey(), raised)))
    assert reply.chunks is not None
    assert max(map(len, reply.chunks)) < 2 * CHUNK_BYTES
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
        "/v1/embeddings": _openai_api.embeddings,
        "/v1/chat/completions": _openai_api.chat_completions,
        "/v1/completions": _openai_api.completions,
    }[path]
    expected = drain(handler(_request(body)))
    reply = http.post(path, content=orjson.dumps(body), headers={"content-type": "application/json"}, timeout=60)
    assert reply.status_code == 200
    assert int(reply.headers["content-length"]) == len(reply.content)
    assert reply.content == expected.content


def test_a_malformed_big_answer_is_cut_in_half(gateway: Gateway, http: httpx.Client) -> None:
    body = {"model": "malformed", "input": ["x"] * 16, "dimensions": 8192, "encoding_format": "base64"}
    whole = drain(_openai_api.embeddings(_request(body))).content
    reply = http.post("/v1/embeddings", json=body, timeout=60)
    assert reply.status_code == 200
    assert reply.content == whole[: len(whole) // 2]
