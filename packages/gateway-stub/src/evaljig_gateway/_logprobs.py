"""The gateway's one language model: a log-probability per token in context, for chat and completions.

A token's log-probability is a pure function of the text before it and of the token itself, the
same whether the token is echoed from the prompt or generated, so loglikelihood scoring (echo +
``logprobs``) and generation agree, as they do on a real model:

* without an answer key (or outside an answer), a hash of the last ``WINDOW`` characters of context
  and the token gives a value in (-2.5, -0.001]; the token is its position's most likely one;
* after a question of the answer key, the keyed answer is what the model expects: a token that
  continues it scores near 0 (and is the greedy choice), a token that departs from it scores
  below -6 and names the expected piece as the more likely alternative. So a multiple-choice
  eval scores the keyed choice highest (``is_greedy`` true), and the other choices lower.

Tokens are the gateway's one tokenizer's (``_tokenizer``, GPT-2's: whitespace before a token).
Chat's ``logprobs.content`` and completions' ``logprobs`` are the same function of the same text:
the prompt (chat: its messages' text joined by newlines) followed by the answer. The first token
of a completions text has no context: its ``token_logprobs`` and ``top_logprobs`` are null, as
OpenAI answers for an echoed prompt; chat never echoes, and an answer to an empty prompt gets
the value for an empty context.
"""

from __future__ import annotations

import bisect
import re
import zlib
from collections.abc import Iterable
from itertools import accumulate
from typing import Any, NamedTuple

from evaljig_gateway import _tokenizer

#: Characters of context the plain (unkeyed) model looks at: it is an n-gram model over characters.
WINDOW = 32
_ALTERNATIVES = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")


def _unit(seed: str) -> float:
    """A stable float in [0, 1) from a string (CRC-32: a scoring request hashes every token it echoes)."""
    return zlib.crc32(seed.encode()) / 2**32


class KeyedText:
    """The answer-key questions found in one text, so each token knows the answer it should follow."""

    def __init__(self, text: str, answers: Iterable[tuple[str, str]]) -> None:
        normalized = " ".join(text.split())
        found: list[tuple[int, int, str]] = []
        for question, said in answers:
            answer = said.lstrip()  # whitespace before an answer is the separator, not what is expected
            if not answer or question not in normalized:
                continue  # the cheap test first: most keys have nothing in a given prompt
            pattern = re.compile(r"\s+".join(re.escape(word) for word in question.split(" ")))
            found += [(m.end(), len(question), answer) for m in pattern.finditer(text)]
        found.sort()
        self._ends = [end for end, _, _ in found]
        self._answers = [answer for _, _, answer in found]
        self.first_end = self._ends[0] if found else len(text) + 1
        """Where the first question ends: tokens before it are scored by the plain model."""

    def question_before(self, position: int) -> tuple[int, str] | None:
        """Where the question that ended last at or before ``position`` (the longest one on a tie) ends, and
        its answer."""
        at = bisect.bisect_right(self._ends, position) - 1
        return (self._ends[at], self._answers[at]) if at >= 0 else None


def _consumed(region: str, answer: str) -> str:
    """How much of ``answer`` the text after its question already says: its longest suffix that starts a word
    (or the region) and begins the answer. Only places holding the answer's first character are tried."""
    first = answer[0]
    start = region.find(first, max(0, len(region) - len(answer)))
    while start >= 0:
        said = region[start:]
        boundary = start == 0 or region[start - 1].isspace() or not region[start - 1].isalnum()
        if boundary and answer.startswith(said):
            return said
        start = region.find(first, start + 1)
    return ""


def _expected_piece(window: str, answer: str, consumed: str) -> str:
    """The next piece of the answer (``consumed`` is a proper prefix of it), with a space first when it would
    otherwise glue onto a word."""
    rest = answer[len(consumed) :]
    if not consumed and window and not window[-1].isspace():
        rest = " " + rest
    return _tokenizer.pieces(rest)[0]


def _value(window: str, token: str, low: float, spread: float) -> float:
    """A log-probability in (-(low + spread), -low], seeded by the context window and the token."""
    return -round(low + spread * _unit(f"{window}\x00{token}"), 6)


def _keyed(token: str, region: str, answer: str, window: str) -> tuple[float, str | None]:
    """(log-probability, the more likely piece or None when ``token`` is the most likely one)."""
    consumed = _consumed(region, answer)
    # the answer is complete: only gluing more onto its last word is unlikely
    if consumed == answer and token[:1].isalnum() and answer[-1:].isalnum():
        return _value(window, token, 6, 2), " "
    if consumed == answer or (not consumed and not token.strip()):
        return _value(window, token, 0.001, 2.5), None
    said = consumed + token if consumed else token.lstrip()
    if answer.startswith(said):
        rest = answer[len(said) :]
        mid_word = bool(rest) and rest[0].isalnum() and said[-1:].isalnum()
        return (_value(window, token, 0.4, 0.5) if mid_word else _value(window, token, 0.001, 0.05)), None
    return _value(window, token, 6, 2), _expected_piece(window, answer, consumed)


def score(
    text: str, at: int, token: str, keyed: KeyedText | None, window: str | None = None
) -> tuple[float, str | None]:
    """The log-probability of ``token`` after ``text[:at]``, and the more likely piece if there is one.

    Only the last ``WINDOW`` characters (``window``, when the caller has cut them already) and,
    after a keyed question, the text since it are read, so scoring a long prompt costs linear time.
    """
    if window is None:
        window = text[max(0, at - WINDOW) : at]
    question = keyed.question_before(at) if keyed is not None else None
    if question is None:
        return _value(window, token, 0.001, 2.5), None
    end, answer = question
    # the text since the question, cut to what ``_consumed`` reads (one more character for its boundary)
    return _keyed(token, text[max(end, at - len(answer) - 9) : at], answer, window)


def _top(token: str, logprob: float, better: str | None, window: str, count: int) -> dict[str, float]:
    """``count`` most likely tokens at this position: the better piece (if any) first, then the token."""
    out: dict[str, float] = {}
    if better is not None and better != token:
        out[better] = _value(window, better, 0.001, 0.05)
    out.setdefault(token, logprob)
    rank = 1
    while len(out) < count:
        word = _ALTERNATIVES[int(_unit(f"alt{rank}\x00{window}\x00{token}") * len(_ALTERNATIVES))]
        out[f" {word}{rank}"] = round(logprob - rank * 0.75 - _unit(f"{rank}\x00{token}") * 0.5, 6)
        rank += 1
    return dict(list(out.items())[:count])


class Scored(NamedTuple):
    """``choices[].logprobs`` columns for some tokens (OpenAI's legacy shape; ``_asdict`` names them)."""

    tokens: list[str]
    token_logprobs: list[float | None]
    top_logprobs: list[dict[str, float] | None]
    text_offset: list[int]


def score_pieces(
    text: str,
    pieces: list[str],
    start: int,
    top: int,
    keyed: KeyedText | None,
    cache: dict[tuple[str, str], float] | None = None,
    *,
    null_first: bool = True,
) -> Scored:
    """Score ``pieces``, which are ``text[start:]`` cut into tokens; the context of each is ``text`` before it.

    ``text_offset`` is each token's position in ``text``. The token at position 0 of ``text``
    has no context: null log-probability and alternatives (unless ``null_first`` is false: chat).
    ``cache`` keeps plain-model values by (window, token) across calls: the
    choices of a multiple-choice request share their context.
    """
    plain_until = keyed.first_end if keyed is not None else len(text) + 1
    cache = {} if cache is None else cache
    out = Scored(list(pieces), [], [], list(accumulate(map(len, pieces), initial=start))[:-1])
    count = max(top, 1)
    for piece, at in zip(out.tokens, out.text_offset, strict=True):
        if at == 0 and null_first:
            out.token_logprobs.append(None)
            out.top_logprobs.append(None)
        else:
            window = text[max(0, at - WINDOW) : at]
            if at < plain_until:  # no question before it: the plain model, the same as ``score`` gives
                better = None
                key = (window, piece)
                logprob = cache.get(key) or cache.setdefault(key, _value(window, piece, 0.001, 2.5))
            else:
                logprob, better = score(text, at, piece, keyed, window)
            out.token_logprobs.append(logprob)
            simple = better is None and count == 1  # the common scoring request (logprobs: 1): no alternatives to draw
            out.top_logprobs.append({piece: logprob} if simple else _top(piece, logprob, better, window, count))
    return out


def chat_logprobs(context: str, tokens: list[str], top: int, keyed: KeyedText | None) -> list[dict[str, Any]]:
    """``choices[].logprobs.content`` for an answer cut into ``tokens`` after ``context`` (the prompt's text).

    The values are :func:`score_pieces`'s for ``context + answer`` from ``len(context)`` on: the
    same a completions request with that prompt gives its completion. Exactly ``top`` alternatives
    per token, most likely first, as OpenAI sends them.
    """
    text = context + "".join(tokens)
    scored = score_pieces(text, tokens, len(context), top, keyed, null_first=False)
    entries = []
    for token, logprob, alts in zip(scored.tokens, scored.token_logprobs, scored.top_logprobs, strict=True):
        ranked = sorted((alts or {}).items() if top else (), key=lambda item: -item[1])
        entries.append({**_entry(token, logprob), "top_logprobs": [_entry(alt, value) for alt, value in ranked]})
    return entries


def _entry(token: str, logprob: float | None) -> dict[str, Any]:
    """A token as chat's ``logprobs.content`` (and each of its ``top_logprobs``) names it."""
    return {"token": token, "logprob": logprob, "bytes": list(token.encode())}
