from __future__ import annotations

import math

import pytest

from evaljig_gateway import AnswerKey, _content, _logprobs, _tokenizer


def test_tokenizer_cuts_as_gpt2_with_whitespace_before_a_token() -> None:
    assert _tokenizer.pieces("Hello, wörld! 42") == ["Hello", ",", " w", "ör", "ld", "!", " 42"]
    assert _content.count_tokens("Hello, wörld! 42") == 7


@pytest.mark.parametrize(
    ("text", "max_tokens", "stop", "expected"),
    [
        ("one two three", None, [], ("one two three", "stop")),
        ("one two three", 2, [], ("one two", "length")),
        ("one two three", 3, [], ("one two three", "stop")),
        ("one two. three", None, ["."], ("one two", "stop")),
    ],
)
def test_truncate(text: str, max_tokens: int | None, stop: list[str], expected: tuple[str, str]) -> None:
    assert _content.truncate(text, max_tokens, stop) == expected


def test_answer_key_prefers_longest_question_and_ignores_whitespace() -> None:
    key = AnswerKey({"What is 2+2?": "B", "What is 2+2? Show work.": "C"})
    assert key.lookup("Question:  What is 2+2?\nShow work.\nAnswer:") == "C"
    assert key.lookup("Q: What is 2+2?") == "B"
    assert key.lookup("unrelated") is None


def test_default_answer_is_a_function_of_the_prompt() -> None:
    assert _content.default_answer("a") == _content.default_answer("a")
    assert _content.default_answer("a") != _content.default_answer("b")
    assert _content.default_answer("a", 0) != _content.default_answer("a", 1)


def test_a_default_answer_carries_the_token_count_the_tokenizer_gives_it() -> None:
    # the count is added up from the answer's parts (every choice's usage reads it): it must be the tokenizer's
    for i in range(2000):
        answer = _content.default_answer(f"question {i}?", i % 3)
        assert _content.count_tokens(answer) == _tokenizer.count(str(answer))
    cut, _ = _content.truncate(answer, 3, [])  # a cut answer is plain text again, counted as such
    assert type(cut) is str
    assert _content.count_tokens(cut) == 3


def test_embeddings_are_unit_vectors_and_stable() -> None:
    vec = _content.embedding("m", "text", 64)
    assert len(vec) == 64
    assert math.isclose(math.sqrt(sum(v * v for v in vec)), 1.0, rel_tol=1e-6)
    assert vec == _content.embedding("m", "text", 64)
    assert vec != _content.embedding("m", "other", 64)


def test_logprobs_are_valid_and_ranked() -> None:
    [entry] = _logprobs.chat_logprobs("The capital is", [" Paris"], 3, None)
    assert entry["token"] == " Paris"
    assert -2.501 < entry["logprob"] <= 0
    lps = [alt["logprob"] for alt in entry["top_logprobs"]]
    assert entry["top_logprobs"][0]["token"] == " Paris"
    assert lps == sorted(lps, reverse=True)
