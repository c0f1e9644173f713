"""Model listing: ``GET /models`` is an OpenAI list of model objects; the model under test is listed or retrievable."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from evaljig_corpus._checks import Checker
from evaljig_corpus._errors import ConformanceError
from evaljig_corpus._transport import DEFAULT_TIMEOUT, Target, client_for, get_json


def assert_models_conformance(
    target: Target, *, model: str | None = None, timeout: float = DEFAULT_TIMEOUT
) -> dict[str, Any]:
    """List models and check every entry; if ``model`` is given it must be listed or retrievable by id."""
    check = Checker("models")
    if model is not None:
        _check_model_id(check, model)
    with client_for(target, timeout) as client:
        data = get_json(check, client, "/models")
        check.equal(data.get("object"), "list", "object")
        ids: list[str] = []
        for i, raw in enumerate(check.arr(data.get("data"), "data", non_empty=True)):
            entry = check.obj(raw, f"data[{i}]")
            ids.append(check.string(entry.get("id"), f"data[{i}].id", non_empty=True))
            check.equal(entry.get("object"), "model", f"data[{i}].object")
            check.integer(entry.get("created"), f"data[{i}].created", minimum=0)
            check.string(entry.get("owned_by"), f"data[{i}].owned_by")
        if len(set(ids)) != len(ids):
            check.fail("data[].id", f"must be unique, got {sorted(i for i in ids if ids.count(i) > 1)}")
        if model is not None and model not in ids:
            _retrieve(check, client, model)
    return data


def _check_model_id(check: Checker, model: Any) -> None:
    """Client-side: the id becomes a URL path segment, so it must not be empty or escape ``/models/``."""
    if not isinstance(model, str) or not model.strip():
        check.fail("model", "must be a non-empty string")
    if model.startswith("/") or ".." in model.split("/") or any(ch.isspace() for ch in model):
        check.fail("model", "must not contain '..' segments, a leading '/' or whitespace")


def _retrieve(check: Checker, client: Any, model: str) -> None:
    try:
        entry = get_json(check, client, f"/models/{quote(model, safe='/')}")
    except ConformanceError as exc:
        check.fail("model", f"{model!r} is neither listed by GET /models nor retrievable ({exc.reason})")
    check.equal(entry.get("id"), model, "model.id")
    check.equal(entry.get("object"), "model", "model.object")
