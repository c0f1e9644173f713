"""Deterministic content: every value is a pure function of the request.

Ids and timestamps come from a digest of the request bytes, answers from the prompt (or a
loaded answer key), token counts from the gateway's one tokenizer (GPT-2's, ``_tokenizer``, which
every endpoint also cuts stream pieces with), embedding vectors from seeded hashes
(log-probabilities are ``_logprobs``).
Nothing reads a clock or a random source.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import math
import random
import struct
from collections.abc import Mapping
from typing import Any

from evaljig_gateway import _tokenizer
from evaljig_gateway._script import Turn, parse_script

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


def count_tokens(text: str) -> int:
    """Tokens in ``text`` by the gateway's one tokenizer (``usage``, ``max_tokens``); a default answer
    (``Answer``) already knows its count."""
    return text.tokens if type(text) is Answer else _tokenizer.count(text)


def created_from(request_digest: str) -> int:
    """A plausible, request-derived Unix timestamp."""
    return CREATED_BASE + int(request_digest[:6], 16)


def normalize_text(text: str) -> str:
    return " ".join(text.split())


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
        turns = next((script for question, script in self._scripts.items() if question in text), ())
        index = sum(1 for m in messages[last + 1 :] if m.get("role") == "assistant")
        return turns[index] if index < len(turns) else None

    def items(self) -> list[tuple[str, str]]:
        """(question with whitespace collapsed, answer) pairs, longest question first."""
        return list(self._answers.items())

    def lookup(self, prompt: str) -> str | None:
        if not self._answers:
            return None
        text = normalize_text(prompt)
        return next((answer for question, answer in self._answers.items() if question in text), None)


class Answer(str):
    """A default answer, with its token count (``count_tokens`` reads it, as ``usage`` does for every choice).

    Made of parts whose tokens are known (the fixed text, a vocabulary word after a space: each is its own
    pre-token, so their counts add up), it is never tokenized; a cut or edit of it is a plain ``str``.
    """

    tokens: int


@functools.cache
def _answer_parts() -> tuple[int, tuple[str, ...], tuple[int, ...]]:
    """Tokens of a default answer's fixed text; each byte's word, and the tokens of that word after a space."""
    words = tuple(_VOCABULARY[b % len(_VOCABULARY)] for b in range(256))
    fixed = _tokenizer.count("Deterministic answer:") + _tokenizer.count(".")
    return fixed, words, tuple(_tokenizer.count(" " + word) for word in words)


def default_answer(prompt: str, seed: int = 0) -> Answer:
    """A short answer that is a stable function of the prompt (and choice index)."""
    fixed, words, tokens = _answer_parts()
    picked = hashlib.sha256(f"{seed}\x00{prompt}".encode()).digest()[:4]
    text = Answer(f"Deterministic answer: {' '.join(map(words.__getitem__, picked))}.")
    text.tokens = fixed + sum(map(tokens.__getitem__, picked))
    return text


def truncate(text: str, max_tokens: int | None, stop: list[str]) -> tuple[str, str]:
    """Apply ``stop`` and ``max_tokens``; return the text and the OpenAI finish reason."""
    for marker in stop:
        if marker and marker in text:
            text = text[: text.index(marker)]
    if max_tokens is not None:
        cut = _tokenizer.pieces(text)
        if len(cut) > max_tokens:
            return "".join(cut[:max_tokens]), "length"
    return text, "stop"


def embedding(model: str, item: Any, dimensions: int) -> list[float]:
    """A unit-length vector seeded by the model and the input."""
    seed = int.from_bytes(hashlib.sha256(f"{model}\x00{item!r}".encode()).digest()[:8], "big")
    rng = random.Random(seed)
    vec = [rng.gauss(0.0, 1.0) for _ in range(dimensions)]
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [round(v / norm, 8) for v in vec]


def encode_base64_floats(vector: list[float]) -> str:
    """OpenAI's ``encoding_format="base64"``: little-endian float32."""
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
