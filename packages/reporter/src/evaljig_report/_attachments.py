"""Files a test attaches to its own case report: what a reader of CI artifacts needs to debug it.

A test appends ``(ATTACHMENT_KEY, {"name": ..., "mime_type": ..., "text": ...})`` (or
``"base64"`` instead of ``"text"``) to ``item.user_properties``; the plugin writes each one
next to the ``case.json`` of that test's case and lists it under ``artifacts``. Unlike a
tool's artifacts (untrusted output: images and CSV only), the test chose these, so any type
is written; names are sanitised the same way and size is capped the same way. Keeping
secrets out of them is the attaching test's job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from evaljig_report._artifacts import (
    DEFAULT_MIME,
    MAX_ARTIFACT_BYTES,
    NameRegistry,
    decode_payload,
    normalize_mime,
    store,
)

#: The ``item.user_properties`` key a test attaches a file to its case report under.
ATTACHMENT_KEY = "evaljig.attachment"


def _payload(entry: Mapping[str, Any]) -> bytes:
    text = entry.get("text")
    if isinstance(text, str):
        data = text.encode("utf-8", errors="replace")
        if len(data) > MAX_ARTIFACT_BYTES:
            raise OverflowError(f"larger than {MAX_ARTIFACT_BYTES} bytes")
        return data
    if "base64" not in entry:
        raise ValueError("an attachment needs 'text' (a string) or 'base64'")
    return decode_payload(entry["base64"])


def write_attachments(
    case_dir: Path, raw: Sequence[object], names: NameRegistry
) -> tuple[list[dict[str, Any]], list[str]]:
    """Write every attachment into ``case_dir``; return artifact records and case errors."""
    records: list[dict[str, Any]] = []
    errors: list[str] = []
    for position, item in enumerate(raw):
        entry: Mapping[str, Any] = item if isinstance(item, Mapping) else {}
        name = entry.get("name") if isinstance(entry.get("name"), str) else f"attachment-{position}"
        mime = normalize_mime(entry.get("mime_type")) or DEFAULT_MIME
        record: dict[str, Any] = {"name": name, "mime_type": mime}
        written, error = store(case_dir, names, record, partial(_payload, entry))
        records.append(written)
        errors += [f"attachment {name!r}: {error}"] if error else []
    return records, errors
