"""Embeddings: one vector per input, in order, of the requested dimensions, as floats or base64 float32."""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Sequence
from typing import Any

from evaljig_corpus._checks import Checker
from evaljig_corpus._conformance.shared import request_body
from evaljig_corpus._transport import DEFAULT_TIMEOUT, Target, client_for, post_json


def assert_embed_conformance(
    target: Target,
    *,
    model: str,
    input: str | Sequence[str] | Sequence[int] | None = None,  # OpenAI's field name
    dimensions: int | None = None,
    encoding_format: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """POST embeddings and check count, order, dimensions, finiteness and ``usage``; return the body."""
    check = Checker("embed")
    body = request_body(model=model, input=input, dimensions=dimensions, encoding_format=encoding_format)
    with client_for(target, timeout) as client:
        data = post_json(check, client, "/embeddings", body)
    check.equal(data.get("object"), "list", "object")
    check.string(data.get("model"), "model", non_empty=True)
    items = check.arr(data.get("data"), "data", non_empty=True)
    expected = _input_count(input)
    if len(items) != expected:
        check.fail("data", f"must hold one embedding per input ({expected}), got {len(items)}")
    sizes: set[int] = set()
    for i, raw in enumerate(items):
        item = check.obj(raw, f"data[{i}]")
        check.equal(item.get("object"), "embedding", f"data[{i}].object")
        check.equal(item.get("index"), i, f"data[{i}].index")
        vector = _vector(check, item.get("embedding"), f"data[{i}].embedding", encoding_format == "base64")
        if not vector or not any(vector):
            check.fail(f"data[{i}].embedding", "must be a non-empty, non-zero vector")
        if dimensions is not None and len(vector) != dimensions:
            check.fail(f"data[{i}].embedding", f"must have dimensions={dimensions} values, got {len(vector)}")
        sizes.add(len(vector))
    if len(sizes) > 1:
        check.fail("data[].embedding", f"all vectors must have the same length, got {sorted(sizes)}")
    check.usage(data.get("usage"), completion=False)
    return data


def _input_count(raw: Any) -> int:
    if isinstance(raw, list) and raw and all(isinstance(x, (str, list)) for x in raw):
        return len(raw)
    return 1


def _vector(check: Checker, raw: Any, where: str, as_base64: bool) -> list[float]:
    if as_base64:
        text = check.string(raw, where)
        try:
            packed = base64.b64decode(text, validate=True)
        except ValueError as exc:  # binascii.Error, or non-ASCII text
            check.fail(where, f"must be base64 when encoding_format is 'base64' ({exc})")
        if len(packed) % 4:
            check.fail(where, f"base64 must decode to little-endian float32 values, got {len(packed)} bytes")
        values = list(struct.unpack(f"<{len(packed) // 4}f", packed))
        for k, value in enumerate(values):
            if not math.isfinite(value):
                check.fail(f"{where}[{k}]", f"must be finite, got {value}")
        return values
    return [check.number(v, f"{where}[{k}]") for k, v in enumerate(check.arr(raw, where))]
