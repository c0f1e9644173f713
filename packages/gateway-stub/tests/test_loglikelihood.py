"""Loglikelihood on ``/v1/completions``: token-id prompts, echo, log-probabilities, as lm_eval uses them.

The prompts are GPT-2 token ids made by a real BPE encoder (tiktoken with GPT-2's ranks and
split pattern, i.e. the ids lm-evaluation-harness's default ``gpt2`` tokenizer sends), and the
lm_eval test drives the endpoint with ``local-completions``' payload and parses the answer
with its ``parse_logprobs`` arithmetic.
"""

from __future__ import annotations

import math
from operator import itemgetter
from typing import Any

import httpx
import pytest

from evaljig_gateway import Gateway

from .conftest import gpt2


def complete(http: httpx.Client, **body: Any) -> dict[str, Any]:
    response = http.post("/v1/completions", json={"model": "gpt-stub", **body})
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def test_the_encoder_is_gpt2() -> None:
    assert gpt2().encode("The capital") == [464, 3139]  # the ids the issue quotes


def test_a_token_id_prompt_is_decoded_one_token_per_id(http: httpx.Client) -> None:
    text = "The capital of France is Paris.\n\n  Café  naïve 日本"
    ids = gpt2().encode(text)
    data = complete(http, prompt=ids, echo=True, max_tokens=0, logprobs=0)
    choice = data["choices"][0]
    assert choice["text"] == text
    assert len(choice["logprobs"]["tokens"]) == len(ids)
    assert "".join(choice["logprobs"]["tokens"]) == text
    assert data["usage"]["prompt_tokens"] == len(ids)


def test_batched_token_id_prompts_answer_one_choice_each(http: httpx.Client) -> None:
    texts = ["The capital of France", "Two plus two is"]
    data = complete(http, prompt=[gpt2().encode(t) for t in texts], echo=True, max_tokens=0)
    assert [c["text"] for c in sorted(data["choices"], key=itemgetter("index"))] == texts


def test_ids_outside_gpt2_decode_to_opaque_tokens(http: httpx.Client) -> None:
    data = complete(http, prompt=[464, 50256, 99999], echo=True, max_tokens=0, logprobs=0)
    assert data["choices"][0]["logprobs"]["tokens"] == ["The", "<|endoftext|>", "<|99999|>"]


@pytest.mark.parametrize(
    ("prompt", "param"),
    [
        ([464, -1], "prompt[1]"),
        ([[464], [3139, "x"]], "prompt[1][1]"),
        ([[464], []], "prompt[1]"),
        ([464, [1]], "prompt"),
    ],
)
def test_a_bad_token_id_is_a_400_naming_it(http: httpx.Client, prompt: Any, param: str) -> None:
    response = http.post("/v1/completions", json={"model": "gpt-stub", "prompt": prompt})
    assert response.status_code == 400
    assert response.json()["error"]["param"] == param


def test_echoed_tokens_keep_their_whitespace_and_offsets(http: httpx.Client) -> None:
    prompt = "  Hello,   world!\n\tHow are\nyou?  "
    data = complete(http, prompt=prompt, echo=True, max_tokens=0, logprobs=1)
    logprobs = data["choices"][0]["logprobs"]
    assert "".join(logprobs["tokens"]) == prompt == data["choices"][0]["text"]
    assert logprobs["text_offset"] == [len("".join(logprobs["tokens"][:i])) for i in range(len(logprobs["tokens"]))]


def test_the_first_echoed_token_has_null_logprobs(http: httpx.Client) -> None:
    logprobs = complete(http, prompt=[464, 3139, 286], echo=True, max_tokens=0, logprobs=1)["choices"][0]["logprobs"]
    assert logprobs["token_logprobs"][0] is None
    assert logprobs["top_logprobs"][0] is None
    assert all(isinstance(lp, float) and lp < 0 for lp in logprobs["token_logprobs"][1:])


def test_the_completion_is_not_glued_onto_the_prompt(http: httpx.Client) -> None:
    prompt = "The capital of France is"
    choice = complete(http, prompt=prompt, echo=True, max_tokens=3, logprobs=1)["choices"][0]
    tokens, offsets = choice["logprobs"]["tokens"], choice["logprobs"]["text_offset"]
    assert choice["text"].startswith(prompt + " ")
    boundary = offsets.index(len(prompt))  # a token starts exactly where the prompt ends
    assert "".join(tokens[:boundary]) == prompt
    assert "".join(tokens) == choice["text"]


def test_max_tokens_0_with_echo_scores_the_prompt_alone(http: httpx.Client) -> None:
    data = complete(http, prompt="Two plus two is four", echo=True, max_tokens=0, logprobs=1)
    assert data["choices"][0]["text"] == "Two plus two is four"
    assert "".join(data["choices"][0]["logprobs"]["tokens"]) == "Two plus two is four"
    assert data["usage"]["completion_tokens"] == 0


def test_a_token_scores_the_same_echoed_or_generated(http: httpx.Client) -> None:
    prompt = "Once upon a time"
    generated = complete(http, prompt=prompt, max_tokens=4, logprobs=2)["choices"][0]
    echoed = complete(http, prompt=prompt + generated["text"], echo=True, max_tokens=0, logprobs=2)["choices"][0]
    count = len(generated["logprobs"]["tokens"])
    assert count == 4
    assert echoed["logprobs"]["tokens"][-count:] == generated["logprobs"]["tokens"]
    assert echoed["logprobs"]["token_logprobs"][-count:] == generated["logprobs"]["token_logprobs"]
    assert echoed["logprobs"]["top_logprobs"][-count:] == generated["logprobs"]["top_logprobs"]
    assert generated["logprobs"]["text_offset"][0] == len(prompt)  # offsets count from the prompt's start


# --------------------------------------------------------------------------- lm_eval local-completions

DOCS = [
    ("Question: What is the capital of France?\nAnswer:", [" Paris", " Lyon", " Marseille", " Nice"], 0),
    ("Question: How many legs does a spider have?\nAnswer:", [" 6", " 4", " 8", " 10"], 2),
    ("Question: Which planet is known as the Red Planet?\nAnswer:", [" Venus", " Jupiter", " Saturn", " Mars"], 3),
    ("Question: Who wrote Hamlet?\nAnswer:", [" Charles Dickens", " William Shakespeare", " Jane Austen", " Homer"], 1),
]
KEY = {
    "What is the capital of France?": "Paris",
    "How many legs does a spider have?": "8",
    "Which planet is known as the Red Planet?": "Mars",
    "Who wrote Hamlet?": "William Shakespeare",
}


def encode_pair(context: str, continuation: str) -> tuple[list[int], list[int]]:
    """lm_eval's ``TemplateLM._encode_pair`` for a causal model."""
    n_spaces = len(context) - len(context.rstrip())
    if n_spaces:
        continuation, context = context[-n_spaces:] + continuation, context[:-n_spaces]
    whole, context_enc = gpt2().encode(context + continuation), gpt2().encode(context)
    return context_enc, whole[len(context_enc) :]


def parse_logprobs(out: dict[str, Any], ctxlens: list[int], drop_last: bool) -> list[tuple[float, bool]]:
    """lm_eval's ``LocalCompletionsAPI.parse_logprobs`` (it drops the one generated token: ``[ctxlen:-1]``)."""
    res = []
    for choice, ctxlen in zip(sorted(out["choices"], key=itemgetter("index")), ctxlens, strict=True):
        end = -1 if drop_last else None
        token_logprobs = choice["logprobs"]["token_logprobs"][ctxlen:end]
        top_logprobs = choice["logprobs"]["top_logprobs"][ctxlen:end]
        is_greedy = all(tok == max(top.values()) for tok, top in zip(token_logprobs, top_logprobs, strict=True))
        res.append((sum(token_logprobs), is_greedy))
    return res


def multiple_choice(
    http: httpx.Client, *, max_tokens: int, batch: bool, tokenized: bool = True
) -> list[list[tuple[float, bool]]]:
    """Score every choice of every doc the way ``local-completions`` does; the scores per doc.

    ``tokenized=False`` is its ``tokenized_requests=False``: the ids are decoded back to a string
    prompt, and the echoed ``token_logprobs`` are still sliced at the context's GPT-2 token count.
    """
    requests = [(encode_pair(context, choice), d) for d, (context, choices, _) in enumerate(DOCS) for choice in choices]
    groups = [requests] if batch else [[r] for r in requests]  # batch_size=16 or lm_eval's default of 1
    scores: list[list[tuple[float, bool]]] = [[] for _ in DOCS]
    for group in groups:
        payload = {
            "model": "gpt-stub",
            "prompt": [ctx + cont if tokenized else gpt2().decode(ctx + cont) for (ctx, cont), _ in group],
            "temperature": 0,
            "max_tokens": max_tokens,
            "logprobs": 1,
            "seed": 1234,
            "echo": True,
        }
        out = http.post("/v1/completions", json=payload).json()
        ctxlens = [len(ctx) for (ctx, _), _ in group]
        for (_, d), score in zip(group, parse_logprobs(out, ctxlens, drop_last=max_tokens > 0), strict=True):
            scores[d].append(score)
    return scores


def accuracy(scores: list[list[tuple[float, bool]]]) -> float:
    hits = [max(range(len(s)), key=lambda i: s[i][0]) == gold for s, (_, _, gold) in zip(scores, DOCS, strict=True)]
    return sum(hits) / len(hits)


@pytest.mark.parametrize("tokenized", [True, False], ids=["token-ids", "strings"])
@pytest.mark.parametrize(("max_tokens", "batch"), [(1, False), (1, True), (0, False)])
def test_lm_eval_multiple_choice_with_an_answer_key_picks_the_keyed_choice(
    max_tokens: int, batch: bool, tokenized: bool
) -> None:
    with Gateway(answers=KEY) as gw, httpx.Client(base_url=gw.url, timeout=10) as http:
        scores = multiple_choice(http, max_tokens=max_tokens, batch=batch, tokenized=tokenized)
    assert accuracy(scores) == 1.0
    for doc_scores, (_, _, gold) in zip(scores, DOCS, strict=True):
        assert doc_scores[gold][1] is True  # the keyed choice is the greedy continuation
        assert not any(greedy for i, (_, greedy) in enumerate(doc_scores) if i != gold)
        assert all(lp < 0 and math.isfinite(lp) for lp, _ in doc_scores)


@pytest.mark.parametrize("tokenized", [True, False], ids=["token-ids", "strings"])
def test_lm_eval_multiple_choice_scores_are_deterministic_and_not_degenerate(
    http: httpx.Client, tokenized: bool
) -> None:
    first = multiple_choice(http, max_tokens=1, batch=False, tokenized=tokenized)
    assert multiple_choice(http, max_tokens=1, batch=True, tokenized=tokenized) == first
    assert multiple_choice(http, max_tokens=1, batch=False, tokenized=not tokenized) == first  # same text, same scores
    values = [lp for doc in first for lp, _ in doc]
    assert all(lp < 0 for lp in values)  # not the 0.0 a gateway without log-probabilities gives
    assert len(set(values)) == len(values)


@pytest.mark.parametrize(
    "text",
    [
        "Question: What is the capital of France?\nAnswer: Paris",
        "The quick brown fox jumps over the lazy dog. It's 2024!\n\n  Indented — naïve café 日本語 🎉",
        "def f(x):\n    return x**2  # squared\n",
    ],
)
def test_a_string_prompt_is_cut_as_gpt2_cuts_it(http: httpx.Client, text: str) -> None:
    ids = gpt2().encode(text)
    as_text = complete(http, prompt=text, echo=True, max_tokens=0, logprobs=1)
    as_ids = complete(http, prompt=ids, echo=True, max_tokens=0, logprobs=1)
    assert as_text["choices"][0]["logprobs"] == as_ids["choices"][0]["logprobs"]
    assert len(as_text["choices"][0]["logprobs"]["tokens"]) == len(ids)
    assert as_text["usage"]["prompt_tokens"] == len(ids)
