"""Tool artifacts (base64 in the tool output) become files next to ``case.json``.

Names come from the tool under test, so they are untrusted: a name never leaves the case
folder, never overwrites ``case.json`` or another artifact, and stays short. Images and CSV
are written; other types are recorded as skipped; a payload that is not valid base64 is
recorded as an error on the case instead of failing the test run.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

from evaljig_common import write_bytes_atomic
from evaljig_report._layout import CASE_FILE

#: Written mime types and the extension a file of that type gets when its name has none of them.
WRITTEN_TYPES: dict[str, tuple[str, ...]] = {
    "image/png": (".png",),
    "image/jpeg": (".jpg", ".jpeg"),
    "image/gif": (".gif",),
    "image/webp": (".webp",),
    "image/svg+xml": (".svg",),
    "text/csv": (".csv",),
}
#: Unregistered spellings tools send (the tool-eval proposal's ``image/jpg``), stored as the registered type.
MIME_ALIASES = {"image/jpg": "image/jpeg", "application/csv": "text/csv"}
DEFAULT_MIME = "application/octet-stream"
MAX_NAME_CHARS = 100
MAX_ARTIFACT_BYTES = 16 * 1024 * 1024
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_EXT = 10
_ROOM_FOR_SUFFIX = 6


def normalize_mime(mime_type: object) -> str:
    """``"Image/PNG; x=1"`` -> ``"image/png"``, ``image/jpg`` -> ``image/jpeg``; anything not a string -> ``""``."""
    mime = mime_type.split(";", 1)[0].strip().lower() if isinstance(mime_type, str) else ""
    return MIME_ALIASES.get(mime, mime)


def sanitize_name(name: object, mime_type: str) -> str:
    """A safe file name for an artifact: one segment, no traversal, at most 100 characters."""
    raw = name if isinstance(name, str) else ""
    base = re.split(r"[\\/]", raw)[-1]
    cleaned = _UNSAFE.sub("_", base).lstrip("._-")
    stem, dot, ext = cleaned.rpartition(".")
    if not dot or not stem or len(ext) > _MAX_EXT:
        stem, ext = cleaned, ""
    ext = f".{ext}" if ext else ""
    wanted = WRITTEN_TYPES.get(mime_type)
    if wanted and ext.lower() not in wanted:
        stem, ext = f"{stem}{ext}" if stem else "", wanted[0]
    stem = stem.rstrip("._-")[: MAX_NAME_CHARS - len(ext) - _ROOM_FOR_SUFFIX].rstrip("._-") or "artifact"
    return f"{stem}{ext}"


class NameRegistry:
    """Hands out names unique within one case folder (case-insensitively, for macOS/Windows)."""

    def __init__(self, reserved: Iterable[str] = (CASE_FILE,)) -> None:
        self._taken = {r.casefold() for r in reserved}

    def claim(self, name: str) -> str:
        stem, dot, ext = name.rpartition(".")
        if not dot:
            stem, ext = name, ""
        suffix = f".{ext}" if dot else ""
        candidate, n = name, 1
        while candidate.casefold() in self._taken:
            n += 1
            candidate = f"{stem}-{n}{suffix}"
        self._taken.add(candidate.casefold())
        return candidate


def decode_payload(payload: object) -> bytes:
    """Strict base64 (line breaks allowed); raises ``ValueError`` with a short reason."""
    if isinstance(payload, bytes):
        payload = payload.decode("ascii", errors="replace")
    if not isinstance(payload, str):
        raise ValueError(f"base64 must be a string, not {type(payload).__name__}")
    compact = "".join(payload.split())
    if len(compact) > (MAX_ARTIFACT_BYTES * 4) // 3 + 4:
        raise OverflowError(f"larger than {MAX_ARTIFACT_BYTES} bytes")
    try:
        return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"malformed base64: {exc}") from None


def write_artifacts(case_dir: Path, raw: object, names: NameRegistry) -> tuple[list[dict[str, Any]], list[str]]:
    """Write every image/CSV artifact of ``raw`` into ``case_dir``; return records and case errors."""
    if raw is None:
        return [], []
    if not isinstance(raw, list):
        return [], [f"inference.artifacts must be a list, not {type(raw).__name__}"]
    records: list[dict[str, Any]] = []
    errors: list[str] = []
    for position, item in enumerate(raw):
        entry = item if isinstance(item, dict) else {}
        name = entry.get("name") if isinstance(entry.get("name"), str) else f"artifact-{position}"
        mime = normalize_mime(entry.get("mime_type"))
        record: dict[str, Any] = {"name": name, "mime_type": mime}
        if mime not in WRITTEN_TYPES:
            records.append(
                {**record, "status": "skipped", "reason": f"type {mime or '(none)'!r} is not an image or CSV"}
            )
            continue
        written, error = store(case_dir, names, record, partial(decode_payload, entry.get("base64")))
        records.append(written)
        errors += [f"artifact {name!r}: {error}"] if error else []
    return records, errors


def store(
    case_dir: Path, names: NameRegistry, record: dict[str, Any], load: Callable[[], bytes]
) -> tuple[dict[str, Any], str | None]:
    """Write what ``load`` returns under a safe, unique name; ``record`` with its outcome, and an error if any.

    ``load`` raising ``OverflowError`` skips the artifact, ``ValueError`` makes it an error.
    """
    try:
        data = load()
    except OverflowError as exc:
        return {**record, "status": "skipped", "reason": str(exc)}, None
    except ValueError as exc:
        return {**record, "status": "error", "reason": str(exc)}, str(exc)
    file_name = names.claim(sanitize_name(record["name"], record["mime_type"]))
    case_dir.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(case_dir / file_name, data)
    return {**record, "status": "written", "file": file_name, "bytes": len(data)}, None
