"""The gateway's one tokenizer: GPT-2's byte-level BPE, offline, for every endpoint.

Chat deltas and ``logprobs``, completions' echo and ``logprobs``, ``usage`` counts, ``max_tokens``
and the limits all cut text here, so the same text gives the same tokens everywhere. GPT-2's is
the tokenizer clients assume when they do not know the model's (lm-eval's ``local-completions``
counts a context's tokens with it and slices the echoed ``token_logprobs`` at that count), so a
text prompt is cut where the client cuts it, and a token-id prompt decodes to the same pieces.

Whitespace goes *before* a token, as GPT-2 cuts text: ``" Paris"``, ``"\\n"``, ``"Answer"``. The
pieces always join back to the text. The BPE ranks are GPT-2's token ids (``_token_ids`` reads
their bytes from the packaged vocabulary), merged as tiktoken merges them. The pre-tokenizer is
r50k's pattern, with Python's ``re`` classes standing in for ``\\p{L}`` and ``\\p{N}`` (identical
for the letters and decimal digits of ordinary text).

A run of more than ``LONG_WORD`` characters without a break (no real text has one; a hostile
prompt may) is cut into ``LONG_WORD``-character parts before merging, so tokenizing stays linear
in the text.
"""

from __future__ import annotations

import functools
import re

from evaljig_gateway._token_ids import vocabulary_bytes
from evaljig_gateway._work import Work

#: r50k's pattern: contractions, letters, digits, other symbols (each with one optional space before),
#: then whitespace (a run keeps its last space for the word after it).
_PRE = re.compile(
    r"""'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+""",
    re.UNICODE,
)
#: A non-space character with whitespace after it: no pre-token spans such a place.
_TOKEN_END = re.compile(r"\S(?=\s)", re.UNICODE)
#: Characters cut into pieces between two yields (about a millisecond of ordinary text).
TEXT_STEP = 4 * 1024
#: Longer unbroken runs are merged in parts of this many characters (quadratic merging stays bounded).
LONG_WORD = 32


@functools.cache
def _ranks() -> dict[bytes, int]:
    return {piece: rank for rank, piece in enumerate(vocabulary_bytes())}


@functools.lru_cache(maxsize=1 << 16)
def _merge(word: str) -> tuple[str, ...]:
    """One pre-token as GPT-2 tokens (text pieces joining back to ``word``)."""
    data = word.encode()
    ranks = _ranks()
    if data in ranks:
        return (word,)
    parts = [data[i : i + 1] for i in range(len(data))]
    missing = len(ranks) + 1
    pair = [ranks.get(parts[i] + parts[i + 1], missing) for i in range(len(parts) - 1)]
    while pair:
        lowest = min(pair)
        if lowest == missing:
            break
        best = pair.index(lowest)
        parts[best : best + 2] = [parts[best] + parts[best + 1]]
        del pair[best]  # only the merged part's two neighbouring pairs change
        if best > 0:
            pair[best - 1] = ranks.get(parts[best - 1] + parts[best], missing)
        if best < len(pair):
            pair[best] = ranks.get(parts[best] + parts[best + 1], missing)
    return _as_text(parts)


def _as_text(parts: list[bytes]) -> tuple[str, ...]:
    """The parts as text; a character split across parts goes to the part holding its first byte
    (the part holding only the rest of it is then empty), as ``_token_ids.decode_pieces`` cuts ids."""
    try:
        return tuple(part.decode() for part in parts)
    except UnicodeDecodeError:
        pass
    owner = [index for index, part in enumerate(parts) for _ in part]
    pieces = [""] * len(parts)
    at = 0
    for char in b"".join(parts).decode():  # a pre-token is whole characters: valid UTF-8
        pieces[owner[at]] += char
        at += len(char.encode())
    return tuple(pieces)


def _pieces_between(text: str, start: int, end: int) -> list[str]:
    out: list[str] = []
    for word in _PRE.findall(text, start, end):
        if len(word) <= LONG_WORD:
            out += _merge(word)
        else:
            for at in range(0, len(word), LONG_WORD):
                out += _merge(word[at : at + LONG_WORD])
    return out


def pieces(text: str) -> list[str]:
    """``text`` as GPT-2 tokens, whitespace before each token; ``"".join(pieces(t)) == t``."""
    return _pieces_between(text, 0, len(text))


def pieces_work(text: str) -> Work[list[str]]:
    """``pieces`` about ``TEXT_STEP`` characters per step, cut only where a pre-token cannot span."""
    out: list[str] = []
    start = 0
    while start < len(text):
        cut = _TOKEN_END.search(text, min(start + TEXT_STEP, len(text)))
        end = cut.start() + 1 if cut else len(text)
        out += _pieces_between(text, start, end)
        start = end
        yield
    return out


def count(text: str) -> int:
    """How many tokens ``text`` is (``usage``, ``max_tokens``, the limits)."""
    return len(pieces(text))


def count_work(text: str, stop_above: int | None = None) -> Work[int]:
    """``count`` in steps; with ``stop_above``, it ends at the first step past it (a lower bound then)."""
    total = start = 0
    while start < len(text):
        cut = _TOKEN_END.search(text, min(start + TEXT_STEP, len(text)))
        end = cut.start() + 1 if cut else len(text)
        total += len(_pieces_between(text, start, end))
        start = end
        if stop_above is not None and total > stop_above:
            return total
        yield
    return total
