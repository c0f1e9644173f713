"""``POST /v1/embeddings``: unit vectors seeded by the model and the input (``_content.embedding``).

inputs x dimensions is checked against ``Limits.max_embedding_values`` before any item is read.
"""

from __future__ import annotations

from typing import Any

from evaljig_gateway import _content, _validation
from evaljig_gateway._errors import invalid
from evaljig_gateway._limits import check_product
from evaljig_gateway._replies import Reply, json_reply
from evaljig_gateway._request import Request, check_prompt

DEFAULT_EMBEDDING_DIMENSIONS = 1536
MAX_EMBEDDING_DIMENSIONS = 8192
_DIMENSIONS: _validation.Rule = ("integer", 1, MAX_EMBEDDING_DIMENSIONS)


def handle(req: Request) -> Reply:
    """``POST /v1/embeddings``."""
    body = req.body
    raw_input = _validation.required(body, "input")
    dims = _validation.optional(body, "dimensions", _DIMENSIONS) or DEFAULT_EMBEDDING_DIMENSIONS
    count = _embedding_count(raw_input)  # the limit first: a refused request costs no per-item work
    what = f"inputs x dimensions ({count} x {dims})"
    check_product("input", what, count * dims, req.limits.max_embedding_values, "--max-embedding-values")
    items = _embedding_items(raw_input)
    fmt = body.get("encoding_format", "float")
    if fmt not in ("float", "base64"):
        raise invalid("encoding_format", "must be 'float' or 'base64'")
    check_prompt(req, sum(len(item) for item in items if isinstance(item, str)), "input")
    data = []
    tokens = 0
    for index, item in enumerate(items):
        vector = _content.embedding(req.model, item, dims)
        tokens += _content.count_tokens(item) if isinstance(item, str) else len(item)
        value: Any = _content.encode_base64_floats(vector) if fmt == "base64" else vector
        data.append({"object": "embedding", "index": index, "embedding": value})
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    return json_reply({"object": "list", "data": data, "model": req.model, "usage": usage})


def _embedding_count(raw: Any) -> int:
    """How many embeddings ``raw`` asks for, read without looking at every item (1 for one token array)."""
    if isinstance(raw, list) and raw and not (isinstance(raw[0], int) and not isinstance(raw[0], bool)):
        return len(raw)
    return 1


def _embedding_items(raw: Any) -> list[Any]:
    if isinstance(raw, str):
        items: list[Any] = [raw]
    elif isinstance(raw, list) and raw and all(isinstance(x, int) and not isinstance(x, bool) for x in raw):
        items = [raw]
    elif isinstance(raw, list) and raw and all(isinstance(x, (str, list)) for x in raw):
        items = list(raw)
    else:
        raise invalid("input", "must be a string, an array of strings, or an array of token arrays")
    for i, item in enumerate(items):
        if isinstance(item, str) and not item:
            raise invalid(f"input[{i}]", "must not be empty")
        if isinstance(item, list) and not (item and all(isinstance(t, int) for t in item)):
            raise invalid(f"input[{i}]", "token arrays must be non-empty arrays of integers")
    return items
