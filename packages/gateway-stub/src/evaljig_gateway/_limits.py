"""Per-request limits: how much a single request may make the gateway read or compute.

One request must never cost the other clients more than a few milliseconds, so the work a
body asks for (vectors, choices, tokens) is bounded before any of it is done, and an
oversized request is answered 400 naming the parameter.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from evaljig_gateway._errors import GatewayError


@dataclass(frozen=True, slots=True)
class Limits:
    """Request limits; every one has a ``serve`` flag of the same name (``--max-embedding-values``)."""

    max_body_bytes: int = 4 * 1024 * 1024
    """Larger bodies are answered 413 before or while they are read."""
    max_header_count: int = 100
    """More request headers than this are answered 431 while the headers are parsed."""
    max_header_bytes: int = 16 * 1024
    """Request line plus header names and values above this are answered 431."""
    max_embedding_values: int = 1024 * 1024
    """Embeddings: inputs x dimensions (floats generated) per request."""
    max_choices: int = 4096
    """Completions: prompts x ``n`` (choices generated) per request; chat's ``n`` is at most 128."""
    max_output_tokens: int = 1024 * 1024
    """Chat and completions: ``n`` x ``max_tokens`` (the tokens a request may ask for)."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"limit {f.name} must be a positive integer, got {value!r}")


def check_product(param: str, what: str, product: int, limit: int, flag: str) -> None:
    """400 naming ``param`` when ``product`` (described by ``what``) exceeds ``limit``."""
    if product > limit:
        raise GatewayError(
            400,
            f"Invalid value for '{param}': {what} = {product:,} exceeds this gateway's limit of {limit:,} "
            f"per request (evaljig-gateway serve {flag}).",
            param=param,
            code="request_too_large",
        )
