"""Request bodies as JSON: orjson parses them (its nesting limit, 1024, bounds the depth), and a body
that is not JSON is one 400 naming orjson's complaint. The body's size is bounded before it is read
(``Limits.max_body_bytes``), so a parse is a few milliseconds at most."""

from __future__ import annotations

from typing import Any

import orjson

from evaljig_gateway._errors import GatewayError


def parse_json(raw: bytes) -> Any:
    """The body as JSON, or a 400 ``invalid_json`` naming orjson's complaint."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise GatewayError(400, f"The request body is not valid JSON: {exc}", code="invalid_json") from None
