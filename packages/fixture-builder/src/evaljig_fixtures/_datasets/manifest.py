"""``manifest.json`` of a dataset package: what it is, and the sha256 and size of every other member."""

from __future__ import annotations

import functools
import hashlib
import json
from importlib.resources import files
from typing import Any

MANIFEST = "manifest.json"
FORMAT = "evaljig-dataset-package/1"
ROWS_MEMBER = "test.jsonl"
ANSWER_KEY_MEMBER = "answer_key.json"
SCHEMA = "dataset-manifest.schema.json"


def canonical_json(data: Any) -> bytes:
    """Fixed key order as given, indent 2, exact code points (no ``\\u`` escapes), trailing newline."""
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def member_entry(data: bytes) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def manifest_problems(manifest: Any) -> list[str]:
    """What is wrong with a parsed manifest against its shipped JSON Schema, each naming the field; empty when usable.

    The schema (``data/dataset-manifest.schema.json``, ``dataset_manifest_schema()``) is the one
    contract: a name such as ``../../etc/evil``, ``rows: -1`` or a field it does not define is
    refused here, before anything else of the package is read.
    """
    problems = [_schema_problem(error) for error in sorted(_validator().iter_errors(manifest), key=_error_key)]
    if problems:
        return problems
    module = manifest["task_module"]
    if module not in manifest["members"]:
        problems.append(f"{MANIFEST}: field 'members': must list the task module {module} (field 'task_module')")
    return problems


MAX_REASON = 160
"""A schema message quotes the offending value: it is cut here, so a hostile value cannot flood the error."""


def _error_key(error: Any) -> tuple[str, str]:
    return (_field(error), error.message)


def _field(error: Any) -> str:
    return ".".join(str(part) for part in error.absolute_path)


def _schema_problem(error: Any) -> str:
    field = _field(error)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(error.schema.get("properties", {}))
        unknown = sorted(str(k) for k in error.instance if k not in allowed)
        where = f"field '{field}'" if field else "top level"
        return f"{MANIFEST}: {where}: unknown field(s) {', '.join(unknown)[:MAX_REASON]} (not in the manifest's schema)"
    if error.validator == "required":
        missing = error.message.split("'")[1] if error.message.count("'") >= 2 else error.message
        name = f"{field}.{missing}" if field else missing
        return f"{MANIFEST}: field '{name}': is required"
    if error.validator == "const":
        got = repr(error.instance)[:MAX_REASON]
        return f"{MANIFEST}: field '{field}': must be {error.validator_value!r}, got {got}"
    reason = error.message if len(error.message) <= MAX_REASON else error.message[:MAX_REASON] + "..."
    return f"{MANIFEST}: field '{field or '(top level)'}': {reason}"


@functools.cache
def _validator() -> Any:
    """The schema's validator, built once (jsonschema is imported on first use: it costs ~100 ms)."""
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

    schema = json.loads(files("evaljig_fixtures").joinpath("data", SCHEMA).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)
