"""Token-id prompts: GPT-2 ids decoded to text, one piece per id, offline.

lm-evaluation-harness's ``local-completions`` (and the legacy OpenAI API) send prompts as lists
of token ids, by default from the GPT-2 tokenizer. The gateway reads them as GPT-2 (``r50k``)
ids: ``gpt2_vocab.bin.xz`` holds the bytes of ids 0..50255 (OpenAI's public GPT-2 vocabulary,
MIT licensed; ~190 kB, loaded on the first token-id request), 50256 is ``<|endoftext|>``. An id
outside that vocabulary (a prompt from another tokenizer) decodes to the opaque piece
``<|id|>``, so any id list still gives a deterministic text and one echoed token per id.

Each id's bytes may end inside a UTF-8 character, so the pieces are cut from the decoded text:
a piece holds the characters whose first byte came from its id. ``"".join(pieces)`` is always
the decoded text, and echo returns exactly one token per id sent, which is what lm_eval's
``token_logprobs[ctxlen:]`` slicing relies on.
"""

from __future__ import annotations

import functools
import lzma
from importlib import resources

from evaljig_gateway._errors import invalid

END_OF_TEXT = 50256
#: Ids above this are refused (no tokenizer has this many; a JSON integer can be any size).
MAX_TOKEN_ID = 2**31 - 1


@functools.cache
def vocabulary_bytes() -> tuple[bytes, ...]:
    """The bytes of GPT-2 ids 0..50255: the file is (length byte, bytes) per id, in id order."""
    raw = lzma.decompress(resources.files("evaljig_gateway").joinpath("gpt2_vocab.bin.xz").read_bytes())
    out: list[bytes] = []
    at = 0
    while at < len(raw):
        size = raw[at]
        out.append(raw[at + 1 : at + 1 + size])
        at += 1 + size
    return tuple(out)


def _id_bytes(token: int, vocabulary: tuple[bytes, ...]) -> bytes:
    if token < len(vocabulary):
        return vocabulary[token]
    return f"<|{'endoftext' if token == END_OF_TEXT else token}|>".encode()


def check_ids(value: object, param: str) -> list[int]:
    """A non-empty list of token ids, or a 400 naming ``param`` (and the index of a bad id)."""
    if not isinstance(value, list) or not value:
        raise invalid(param, "token arrays must be non-empty arrays of integers")
    for j, token in enumerate(value):
        if isinstance(token, bool) or not isinstance(token, int) or not 0 <= token <= MAX_TOKEN_ID:
            raise invalid(f"{param}[{j}]", f"must be a token id between 0 and {MAX_TOKEN_ID}")
    return value


def decode_pieces(ids: list[int]) -> list[str]:
    """One text piece per id; they join to the decoded text (invalid UTF-8 becomes U+FFFD)."""
    vocabulary = vocabulary_bytes()
    return pieces_of([_id_bytes(token, vocabulary) for token in ids])


def pieces_of(chunks: list[bytes]) -> list[str]:
    """One text piece per chunk of bytes, joining to their decoded text (each byte that is not part of valid
    UTF-8 becomes U+FFFD): a character split across chunks goes to the chunk holding its first byte (the rest's
    piece is then empty)."""
    try:  # the common case: every chunk is whole UTF-8 on its own
        return [chunk.decode("utf-8") for chunk in chunks]
    except UnicodeDecodeError:
        pass
    owner = [index for index, chunk in enumerate(chunks) for _ in chunk]  # per byte, the chunk it came from
    pieces = [""] * len(chunks)
    at = 0
    for char in b"".join(chunks).decode("utf-8", errors="surrogateescape"):
        escaped = "\udc80" <= char <= "\udcff"  # surrogateescape's stand-in for one byte that is not UTF-8
        pieces[owner[at]] += "\ufffd" if escaped else char
        at += 1 if escaped else len(char.encode())
    return pieces
