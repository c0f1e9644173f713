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

A run of more than ``LONG_WORD`` letters, digits or symbols without a break (no real word is one;
a hostile prompt may be) is cut one character per token instead of merged, and long texts are cut
in spans at places no pre-token spans (whitespace after a token, a letter or digit before a symbol,
a change between letters and digits), so tokenizing any text costs linear time and a limit check
can stop counting early.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from itertools import chain

from evaljig_gateway._token_ids import pieces_of, vocabulary_bytes

#: r50k's pattern: contractions, letters, digits, other symbols (each with one optional space before),
#: then whitespace (a run keeps its last space for the word after it).
_PRE = re.compile(r"""'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+""")
#: ``_PRE`` for ASCII text, its classes spelled out (the same matches there, about twice as fast).
_PRE_ASCII = re.compile(r"""'(?:[sdmt]|ll|ve|re)| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")
#: Places no pre-token spans: whitespace after a non-space; a symbol after a letter or digit; a digit
#: after a letter and a letter after a digit (a letter or digit run always ends there, and a match
#: starts); and inside a run of one class longer than ``LONG_WORD`` on both sides (cut per character
#: either way).
_CUT = re.compile(
    r"(?<=\S)(?=\s)|(?<=[^\W_])(?=[^\s\w]|_)|(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])"
    r"|(?<=[^\W\d_]{35})(?=[^\W\d_]{34})|(?<=\d{35})(?=\d{34})|(?<=\s{35})(?=\s{34})"
    r"|(?<=(?:[^\s\w]|_){35})(?=(?:[^\s\w]|_){34})"
)
#: Characters cut per regex call in a long text (each call holds the GIL) and counted before a limit
#: check looks at the total again.
TEXT_STEP = 4 * 1024
#: Texts longer than this are cut in spans of about ``TEXT_STEP`` characters (see ``pieces``).
LONG_TEXT = 4 * TEXT_STEP
#: Longer unbroken runs are cut one character per token (merging is quadratic in a run's length).
LONG_WORD = 32


@functools.cache
def _ranks() -> dict[bytes, int]:
    return {piece: rank for rank, piece in enumerate(vocabulary_bytes())}


CACHE_SIZE = 1 << 16


class _Merged(dict[str, tuple[str, ...]]):
    """Pre-tokens as GPT-2 tokens (text pieces joining back to the word), kept once merged (most words of a
    text recur; emptied when it reaches ``CACHE_SIZE``). A run longer than ``LONG_WORD`` is cut one character
    per token and not kept. A lookup of a kept word is a dict hit in C: counting a text (``usage``, the hot
    path of every request) is two ``map`` calls over its pre-tokens."""

    def __missing__(self, word: str) -> tuple[str, ...]:
        if len(word) > LONG_WORD:
            return tuple(word)
        if len(self) >= CACHE_SIZE:
            self.clear()
        found = self[word] = _bpe(word)
        return found


_MERGED = _Merged()


def _bpe(word: str) -> tuple[str, ...]:
    data = word.encode()
    ranks = _ranks()
    if data in ranks:
        return (word,)
    parts = [data[i : i + 1] for i in range(len(data))]
    missing = len(ranks) + 1
    pair = [ranks.get(parts[i] + parts[i + 1], missing) for i in range(len(parts) - 1)]
    while pair and (lowest := min(pair)) != missing:
        best = pair.index(lowest)
        parts[best : best + 2] = [parts[best] + parts[best + 1]]
        del pair[best]  # only the merged part's two neighbouring pairs change
        if best > 0:
            pair[best - 1] = ranks.get(parts[best - 1] + parts[best], missing)
        if best < len(pair):
            pair[best] = ranks.get(parts[best] + parts[best + 1], missing)
    return tuple(pieces_of(parts))  # a character split across parts goes to the part holding its first byte


def _steps(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` spans of about ``TEXT_STEP`` characters, cut where no pre-token spans."""
    start = 0
    while start < len(text):
        # at least LONG_WORD + 3 characters a step: a run cut inside stays longer than LONG_WORD on both sides
        cut = _CUT.search(text, min(start + max(TEXT_STEP, LONG_WORD + 3), len(text)))
        end = cut.start() if cut else len(text)
        yield start, end
        start = end


def _pre_tokens(text: str) -> Iterator[list[str]]:
    """``text``'s pre-tokens, a list per span: one span for most texts, ``_steps`` for a long one (one regex
    call over a megabyte would hold the GIL, and so every other thread and the event loop, for a quarter of
    a second)."""
    pre = _PRE_ASCII if text.isascii() else _PRE
    spans = [(0, len(text))] if len(text) <= LONG_TEXT else _steps(text)
    return (pre.findall(text, start, end) for start, end in spans)


def pieces(text: str) -> list[str]:
    """``text`` as GPT-2 tokens, whitespace before each token; ``"".join(pieces(t)) == t``."""
    return list(chain.from_iterable(map(_MERGED.__getitem__, chain.from_iterable(_pre_tokens(text)))))


def count(text: str, stop_above: int | None = None) -> int:
    """How many tokens ``text`` is (``usage``, ``max_tokens``, the limits); with ``stop_above``, counting
    ends at the first span of about ``TEXT_STEP`` characters past it (the count is then a lower bound).

    Every request counts its prompt: most are one span, so one regex call and a dict hit per pre-token."""
    total = 0
    for words in _pre_tokens(text):
        total += sum(map(len, map(_MERGED.__getitem__, words)))
        if stop_above is not None and total > stop_above:
            break
    return total
