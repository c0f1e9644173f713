"""The tool-eval proposal's shapes, accepted beside evaljig's own when a case is recorded.

A proposal-shaped tool result is ``{id, status, logs, code, code_output, text_summary, function_response}``
whose ``function_response.artifact_parts`` holds parallel lists ``{filenames, bytes, mimetypes}`` of
base64 blobs. The recorder turns those parts into evaljig artifact items (written as files like any
other artifact) and replaces them in ``function_response`` by the proposal's file references. Keys
the tool did not return are not added: a missing ``status`` is ``inference_status: unknown`` in
index.json only (``_rows``), so the report's "Actual" shows exactly what the tool returned.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaljig_report._artifacts import DEFAULT_MIME

PARTS_KEY = "artifact_parts"


def split_artifact_parts(inference: Mapping[str, Any]) -> tuple[dict[str, Any], object]:
    """``inference`` without ``function_response.artifact_parts`` (a shallow copy), and the parts (None if absent).

    Only the parts are removed, so no base64 blob is copied into the stored inference.
    """
    rest = dict(inference)
    response = rest.get("function_response")
    if not isinstance(response, Mapping) or PARTS_KEY not in response:
        return rest, None
    rest["function_response"] = {k: v for k, v in response.items() if k != PARTS_KEY}
    return rest, response[PARTS_KEY]


def parts_to_items(parts: object) -> tuple[list[dict[str, Any]], list[str]]:
    """``{filenames, bytes, mimetypes}`` -> evaljig artifact items ``{name, mime_type, base64}``, and errors.

    As in the proposal, a blob without a name is ``artifact_<n>`` and one without a type is
    ``application/octet-stream`` (so it is listed as skipped); ``mime_types`` is accepted for ``mimetypes``.
    """
    where = f"inference.function_response.{PARTS_KEY}"
    if parts is None:
        return [], []
    if not isinstance(parts, Mapping):
        return [], [f"{where} must be an object with filenames, bytes and mimetypes, not {type(parts).__name__}"]
    lists: dict[str, list[Any]] = {}
    for key in ("filenames", "bytes", "mimetypes"):
        value = parts.get(key, parts.get("mime_types") if key == "mimetypes" else None)
        if value is not None and not isinstance(value, list):
            return [], [f"{where}.{key} must be a list, not {type(value).__name__}"]
        lists[key] = value or []
    names, blobs, mimes = lists["filenames"], lists["bytes"], lists["mimetypes"]
    items = [
        {
            "name": names[n] if n < len(names) and isinstance(names[n], str) else f"artifact_{n}",
            "mime_type": mimes[n] if n < len(mimes) and isinstance(mimes[n], str) else DEFAULT_MIME,
            "base64": blob,
        }
        for n, blob in enumerate(blobs)
    ]
    return items, []


def file_refs(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The proposal's ``function_response.artifacts``: ``{kind, mimetype, path}`` or ``{kind, mimetype, skipped}``."""
    refs: list[dict[str, Any]] = []
    for record in records:
        mime = record["mime_type"]
        kind = "image" if mime.startswith("image/") else "csv" if mime == "text/csv" else "binary"
        if record["status"] == "written":
            refs.append({"kind": kind, "mimetype": mime, "path": record["file"]})
        else:
            refs.append({"kind": kind, "mimetype": mime, "skipped": True, "reason": record["reason"]})
    return refs


def failed_inference() -> dict[str, Any]:
    """What is stored when the tool raised and returned nothing: the proposal's error status."""
    return {"status": "error", "function_response": None}
