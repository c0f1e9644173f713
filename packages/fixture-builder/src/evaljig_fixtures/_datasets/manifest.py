"""``manifest.json`` of a dataset package: what it is, and the sha256 and size of every other member."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

MANIFEST = "manifest.json"
FORMAT = "evaljig-dataset-package/1"
ROWS_MEMBER = "test.jsonl"
ANSWER_KEY_MEMBER = "answer_key.json"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def canonical_json(data: Any) -> bytes:
    """Fixed key order as given, indent 2, exact code points (no ``\\u`` escapes), trailing newline."""
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def member_entry(data: bytes) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def manifest_problems(manifest: Any) -> list[str]:
    """What is wrong with a parsed manifest, each naming the field; empty when it is usable."""
    if not isinstance(manifest, dict):
        return ["manifest.json: must be a JSON object"]
    problems = []
    if manifest.get("format") != FORMAT:
        problems.append(f"manifest.json: field 'format': must be {FORMAT!r}, got {manifest.get('format')!r}")
    for field in ("name", "task_module", "task"):
        if not isinstance(manifest.get(field), str) or not manifest[field]:
            problems.append(f"manifest.json: field '{field}': must be a non-empty string")
    members = manifest.get("members")
    if not isinstance(members, Mapping) or not members:
        return [*problems, "manifest.json: field 'members': must be a non-empty object"]
    for name, entry in members.items():
        if not isinstance(entry, Mapping) or set(entry) != {"sha256", "size"}:
            problems.append(f"manifest.json: field 'members.{name}': must be {{sha256, size}}")
        elif not isinstance(entry["sha256"], str) or not _SHA256.match(entry["sha256"]):
            problems.append(f"manifest.json: field 'members.{name}.sha256': must be 64 lowercase hex digits")
        elif isinstance(entry["size"], bool) or not isinstance(entry["size"], int) or entry["size"] < 0:
            problems.append(f"manifest.json: field 'members.{name}.size': must be a non-negative integer")
    for required in (ROWS_MEMBER, ANSWER_KEY_MEMBER, manifest.get("task_module")):
        if isinstance(required, str) and required not in members:
            problems.append(f"manifest.json: field 'members': must list {required}")
    return problems
