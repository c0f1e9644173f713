"""``GET /v1/models`` and ``GET /v1/models/{name}``: every name exists, since the name *is* the behaviour."""

from __future__ import annotations

from typing import Any

from evaljig_gateway import _content
from evaljig_gateway._replies import Reply, json_reply

#: Example names listed by ``GET /v1/models``; any other name works too.
LISTED_MODELS = ("gpt-stub", "fail-once", "always-fail", "rate-limit", "slow-100", "malformed")
PREFIX = "/v1/models/"


def handle(path: str) -> Reply:
    """The listing for ``/v1/models``, one model object for ``/v1/models/{name}`` (every name exists: the name
    *is* the behaviour, see ``_behaviours``)."""
    if path.startswith(PREFIX):
        return json_reply(_model_object(path[len(PREFIX) :]))
    return json_reply({"object": "list", "data": [_model_object(m) for m in LISTED_MODELS]})


def _model_object(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": _content.CREATED_BASE, "owned_by": "evaljig"}
