"""One text model: chat and completions cut and score the same text the same way.

Chat's ``logprobs.content`` and completions' ``logprobs`` are one function of (context, token),
and both endpoints (and ``usage``) cut text with one tokenizer, GPT-2's (whitespace before a
token). A property test drives both endpoints over HTTP with the same context and answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaljig_gateway import Gateway, _content

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
#: Any text but lone surrogates (JSON cannot carry them).
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)


@pytest.fixture(scope="module")
def shared() -> Iterator[tuple[Gateway, httpx.Client]]:
    with Gateway() as gw, httpx.Client(base_url=gw.url, timeout=30) as http:
        yield gw, http


def _post(http: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = http.post(path, json={"model": "gpt-stub", **body})
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def both(http: httpx.Client, context: str, top: int) -> tuple[dict[str, Any], dict[str, Any]]:
    chat = _post(
        http,
        "/v1/chat/completions",
        {"messages": [{"role": "user", "content": context}], "logprobs": True, "top_logprobs": top},
    )
    completion = _post(http, "/v1/completions", {"prompt": context, "max_tokens": 10_000, "logprobs": top})
    return chat, completion


def assert_same_model(chat: dict[str, Any], completion: dict[str, Any]) -> None:
    content = chat["choices"][0]["logprobs"]["content"]
    legacy = completion["choices"][0]["logprobs"]
    assert chat["choices"][0]["message"]["content"] == completion["choices"][0]["text"]
    assert [c["token"] for c in content] == legacy["tokens"]
    assert [c["logprob"] for c in content] == legacy["token_logprobs"]
    assert [{t["token"]: t["logprob"] for t in c["top_logprobs"]} for c in content] == legacy["top_logprobs"]
    assert chat["usage"]["prompt_tokens"] == completion["usage"]["prompt_tokens"]
    assert chat["usage"]["completion_tokens"] == completion["usage"]["completion_tokens"] == len(content)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    prefix=TEXT,
    question=st.lists(WORD, min_size=1, max_size=4),
    answer=st.lists(WORD | TEXT, min_size=1, max_size=4),
    top=st.integers(1, 5),
)
def test_keyed_answers_score_the_same_on_both_endpoints(
    shared: tuple[Gateway, httpx.Client], prefix: str, question: list[str], answer: list[str], top: int
) -> None:
    gw, http = shared
    asked = " ".join(question) + "?"
    said = " " + " ".join(answer)  # a leading space: completions adds none, the boundary is a token boundary
    gw.set_answers({asked: said})
    try:
        assert_same_model(*both(http, f"{prefix} {asked}", top))
    finally:
        gw.set_answers(None)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(context=TEXT, top=st.integers(1, 5))
def test_prompt_derived_answers_score_the_same_on_both_endpoints(
    shared: tuple[Gateway, httpx.Client], context: str, top: int
) -> None:
    _, http = shared
    assert_same_model(*both(http, context + "\n", top))  # ends in whitespace: completions adds no space


def test_an_echoed_answer_scores_as_the_chat_answer(shared: tuple[Gateway, httpx.Client]) -> None:
    gw, http = shared
    gw.set_answers({"What is the capital of France?": " Paris, of course."})
    try:
        context = "Question: What is the capital of France?"
        chat, _ = both(http, context, 2)
        content = chat["choices"][0]["logprobs"]["content"]
        echoed = _post(
            http,
            "/v1/completions",
            {"prompt": context + " Paris, of course.", "echo": True, "max_tokens": 0, "logprobs": 2},
        )["choices"][0]["logprobs"]
    finally:
        gw.set_answers(None)
    tail = len(content)
    assert echoed["tokens"][-tail:] == [c["token"] for c in content] == [" Paris", ",", " of", " course", "."]
    assert echoed["token_logprobs"][-tail:] == [c["logprob"] for c in content]
    assert all(lp > -0.5 for lp in echoed["token_logprobs"][-tail:])  # the keyed answer is what the model expects


@given(text=TEXT)
def test_every_cut_is_the_one_tokenizer(text: str) -> None:
    from evaljig_gateway import _tokenizer  # new module: the HTTP tests above run without it

    cut = _tokenizer.pieces(text)
    assert "".join(cut) == text
    assert _content.count_tokens(text) == len(cut)


def test_whitespace_goes_before_a_token_as_gpt2_cuts_it() -> None:
    from evaljig_gateway import _tokenizer

    assert _tokenizer.pieces("Question: Who?\nAnswer: Paris  and London ") == [
        "Question", ":", " Who", "?", "\n", "Answer", ":", " Paris", " ", " and", " London", " ",
    ]  # fmt: skip
    assert _content.truncate("Paris is large.", 2, []) == ("Paris is", "length")


def test_a_hostile_run_is_cut_one_character_per_token() -> None:
    """A run of one class longer than 32 characters (no real word is one) is cut per character, and long
    texts are counted in spans even without whitespace: tokenizing stays linear and a limit check stops early."""
    from evaljig_gateway import _tokenizer

    text = "x" * 100_000 + " y" + "!" * 30_000 + "a1" * 20_000 + "\n" * 5_000
    cut = _tokenizer.pieces(text)
    assert "".join(cut) == text
    assert cut[:3] == ["x", "x", "x"]
    assert _tokenizer.count(text, stop_above=len(cut)) == _tokenizer.count(text) == len(cut)
    assert _tokenizer.count(text, stop_above=10) <= 2 * _tokenizer.TEXT_STEP  # stops at the first span past it
    assert _tokenizer.pieces("y" * 32) != ["y"] * 32  # up to 32 characters: merged as GPT-2 merges them
