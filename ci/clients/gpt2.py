"""GPT-2's tokenizer offline, for lm-eval: a tiktoken ``Encoding`` built from the gateway's packaged GPT-2 vocabulary.

lm-eval's ``local-completions`` needs a tokenizer for loglikelihood (to cut the echoed prompt at the
context length), and both its HF and tiktoken backends download one. GPT-2's BPE ranks are its token
ids, so the ids' bytes (``evaljig_gateway``'s ``gpt2_vocab.bin.xz``: a length byte then the bytes,
per id 0..50255) are all tiktoken needs; registering the encoding as ``gpt2`` makes
``tiktoken.encoding_for_model("gpt2")`` return it without a download.
"""

from __future__ import annotations

import lzma
from importlib import resources
from typing import Any

#: tiktoken's r50k (GPT-2) pre-tokenizer pattern.
PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
END_OF_TEXT = 50256


def vocabulary() -> list[bytes]:
    raw = lzma.decompress(resources.files("evaljig_gateway").joinpath("gpt2_vocab.bin.xz").read_bytes())
    out: list[bytes] = []
    at = 0
    while at < len(raw):
        out.append(raw[at + 1 : at + 1 + raw[at]])
        at += 1 + raw[at]
    return out


def register_gpt2(tiktoken: Any) -> Any:
    """Build GPT-2's encoding and put it in tiktoken's registry under ``gpt2``; returns it."""
    ranks = {piece: rank for rank, piece in enumerate(vocabulary())}
    encoding = tiktoken.Encoding(
        "gpt2", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": END_OF_TEXT}
    )
    tiktoken.registry.ENCODINGS["gpt2"] = encoding
    return encoding
