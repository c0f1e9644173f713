"""OpenAI-shaped error responses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evaljig_common import EvaljigError

#: Error types other than ``invalid_request_error``, which every other status has.
#: (429's is OpenAI's type for a requests-per-minute limit; ``tokens`` for tokens per minute.)
_TYPES = {429: "requests", 500: "server_error", 503: "server_error"}
_CODES = {
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    413: "request_too_large",
    429: "rate_limit_exceeded",
    431: "request_header_fields_too_large",
}


class ClientGoneError(Exception):
    """The client disconnected before it was answered (journaled as 499, nothing sent)."""


@dataclass(slots=True)
class GatewayError(EvaljigError):
    """An error answered to the client as ``{"error": {...}}`` with ``status``."""

    status: int
    message: str
    param: str | None = None
    code: str | None = None
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    type: str | None = None
    """The error's ``type``; None for the status's usual one (a 429 for tokens per minute is ``tokens``)."""

    def body(self) -> dict[str, Any]:
        kind = self.type or _TYPES.get(self.status, "invalid_request_error")
        code = self.code if self.code is not None else _CODES.get(self.status)
        return {"error": {"message": self.message, "type": kind, "param": self.param, "code": code}}


def invalid(param: str, reason: str) -> GatewayError:
    """A 400 naming the offending field."""
    return GatewayError(400, f"Invalid value for '{param}': {reason}", param=param, code="invalid_value")


def missing(param: str) -> GatewayError:
    """A 400 for a required field that is absent."""
    return GatewayError(400, f"Missing required parameter: '{param}'.", param=param, code="missing_required_parameter")
