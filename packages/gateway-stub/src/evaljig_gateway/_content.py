"""Deterministic content: every value is a pure function of the request.

Ids and timestamps come from a digest of the request bytes, answers from the prompt (or a
loaded answer key), token counts from a simple word/punctuation tokenizer, log-probabilities
and embedding vectors from seeded hashes. Nothing reads a clock or a random source.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import math
import random
import re
import struct
from collections.abc import Iterable, Mapping
from typing import Any

from evaljig_gateway._script import Turn, parse_script
from evaljig_gateway._work import Work, drain

TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_SPACES = re.compile(r"\s+")
_SPACE = re.compile(r"\s")
#: Characters tokenized, values generated or tokens scored between two yields (about a millisecond).
TEXT_STEP = 4 * 1024
VALUE_STEP = 256
#: 2023-11-14T22:13:20Z: ``created`` values are offsets from here, so they look plausible.
CREATED_BASE = 1_700_000_000
_VOCABULARY = (
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliett",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
)


def tokenize(text: str) -> list[str]:
    """Split text into word and punctuation tokens (stable across Python versions)."""
    return TOKEN.findall(text)


def count_tokens(text: str) -> int:
    return len(TOKEN.findall(text))


def count_tokens_work(text: str, stop_above: int | None = None) -> Work[int]:
    """``count_tokens`` in steps of about ``TEXT_STEP`` characters, cut at whitespace (no token spans one).

    With ``stop_above``, counting ends at the first step past it (the count returned is then only a
    lower bound above ``stop_above``): a limit check never counts a hostile text in full.
    """
    total = start = 0
    while start < len(text):
        cut = _SPACE.search(text, min(start + TEXT_STEP, len(text)))
        end = cut.start() if cut else len(text)
        total += len(TOKEN.findall(text, start, end))
        start = end + 1 if cut else end
        if stop_above is not None and total > stop_above:
            return total
        yield
    return total


def pieces(text: str) -> list[str]:
    """One piece per token, with the whitespace around it, so the pieces join back to exactly ``text``.

    Stream deltas and chat log-probability tokens use them: clients concatenate both into the answer.
    """
    spans = [m.start() for m in TOKEN.finditer(text)]
    if not spans:
        return [text] if text else []
    cuts = [0, *spans[1:], len(text)]
    return [text[a:b] for a, b in itertools.pairwise(cuts) if b > a]


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def created_from(request_digest: str) -> int:
    """A plausible, request-derived Unix timestamp."""
    return CREATED_BASE + int(request_digest[:6], 16)


def normalize_text(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def message_text(content: Any) -> str:
    """Text of an OpenAI message ``content`` (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict) and "text" in part)
    return ""


class AnswerKey:
    """Known answers for known questions: the longest question found in the prompt wins.

    A string answer is text for any prompt holding the question; an object is a scripted chat turn
    (or ``{"turns": [...]}``, see ``_script``) for a conversation whose last user message holds it.
    """

    def __init__(self, answers: Mapping[str, str | Mapping[str, Any]] | None = None) -> None:
        items = sorted(
            ((normalize_text(q), a) for q, a in (answers or {}).items()), key=lambda qa: (-len(qa[0]), qa[0])
        )
        self._answers = {q: a for q, a in items if isinstance(a, str)}
        self._scripts = {q: parse_script(a, f"answer for {q!r}") for q, a in items if not isinstance(a, str)}

    def __len__(self) -> int:
        return len(self._answers) + len(self._scripts)

    def turn_for(self, messages: list[dict[str, Any]]) -> Turn | None:
        """The scripted turn for a conversation: by the last user message, then by assistant turns since."""
        if not self._scripts:
            return None
        last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=None)
        if last is None:
            return None
        text = normalize_text(message_text(messages[last].get("content")))
        for question, turns in self._scripts.items():
            if question in text:
                index = sum(1 for m in messages[last + 1 :] if m.get("role") == "assistant")
                return turns[index] if index < len(turns) else None
        return None

    def items(self) -> list[tuple[str, str]]:
        """(question with whitespace collapsed, answer) pairs, longest question first."""
        return list(self._answers.items())

    def lookup(self, prompt: str) -> str | None:
        if not self._answers:
            return None
        text = normalize_text(prompt)
        for question, answer in self._answers.items():
            if question in text:
                return answer
        return None


def _longest_first(entry: tuple[str, Any]) -> tuple[int, str]:
    return -len(entry[0]), entry[0]


def default_answer(prompt: str, seed: int = 0) -> str:
    """A short answer that is a stable function of the prompt (and choice index)."""
    h = hashlib.sha256(f"{seed}\x00{prompt}".encode()).digest()
    words = [_VOCABULARY[b % len(_VOCABULARY)] for b in h[:4]]
    return f"Deterministic answer: {' '.join(words)}."


def truncate(text: str, max_tokens: int | None, stop: list[str]) -> tuple[str, str]:
    """Apply ``stop`` and ``max_tokens``; return the text and the OpenAI finish reason."""
    for marker in stop:
        if marker and marker in text:
            text = text[: text.index(marker)]
    if max_tokens is not None:
        spans = [m.span() for m in TOKEN.finditer(text)]
        if len(spans) > max_tokens:
            return text[: spans[max_tokens - 1][1]] if max_tokens else "", "length"
    return text, "stop"


def _unit(seed: str) -> float:
    """A stable float in [0, 1) from a string."""
    return int.from_bytes(hashlib.blake2b(seed.encode(), digest_size=8).digest(), "big") / 2**64


def token_logprob(token: str, position: int) -> float:
    """A deterministic log-probability in (-2.5, -0.001]."""
    return -round(0.001 + 2.5 * _unit(f"{position}\x00{token}"), 6)


def alternatives(token: str, position: int, count: int) -> list[tuple[str, float]]:
    """The chosen token first, then ``count - 1`` less likely alternatives."""
    best = token_logprob(token, position)
    out = [(token, best)]
    for rank in range(1, count):
        word = _VOCABULARY[int(_unit(f"alt{rank}\x00{position}\x00{token}") * len(_VOCABULARY))]
        out.append((f"{word}{rank}", round(best - rank * 0.75 - _unit(f"{rank}{token}") * 0.5, 6)))
    return out


def chat_logprobs(tokens: Iterable[str], top: int) -> list[dict[str, Any]]:
    """``choices[].logprobs.content`` for the chat API: exactly ``top`` alternatives per token, as OpenAI sends."""
    return drain(chat_logprobs_work(tokens, top))


def chat_logprobs_work(tokens: Iterable[str], top: int) -> Work[list[dict[str, Any]]]:
    """``chat_logprobs`` yielding after each token that has alternatives (twenty take about 0.1 ms)."""
    out: list[dict[str, Any]] = []
    for i, tok in enumerate(tokens):
        out.append(
            {
                "token": tok,
                "logprob": token_logprob(tok, i),
                "bytes": list(tok.encode()),
                "top_logprobs": [
                    {"token": alt, "logprob": lp, "bytes": list(alt.encode())}
                    for alt, lp in (alternatives(tok, i, top) if top else [])
                ],
            }
        )
        if top:
            yield
    return out


def embedding(model: str, item: Any, dimensions: int) -> list[float]:
    """A unit-length vector seeded by the model and the input."""
    return drain(embedding_work(model, item, dimensions))


def embedding_work(model: str, item: Any, dimensions: int) -> Work[list[float]]:
    """``embedding`` yielding every ``VALUE_STEP`` values (8,192 dimensions take 10-40 milliseconds)."""
    seed = int.from_bytes(hashlib.sha256(f"{model}\x00{item!r}".encode()).digest()[:8], "big")
    rng = random.Random(seed)
    vec: list[float] = []
    while len(vec) < dimensions:
        vec.extend(rng.gauss(0.0, 1.0) for _ in range(min(VALUE_STEP, dimensions - len(vec))))
        yield
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    unit: list[float] = []
    for start in range(0, dimensions, VALUE_STEP):
        unit.extend(round(v / norm, 8) for v in vec[start : start + VALUE_STEP])
        yield
    return unit


def encode_base64_floats(vector: list[float]) -> str:
    """OpenAI's ``encoding_format="base64"``: little-endian float32."""
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
