"""The JSON Schema of ``case.json``, shipped as package data, and the checks built on it.

Full validation costs ~200 µs a document, so the plugin validates what it writes while a
merge of 100,000 files uses :func:`quick_check` (the fields a merge relies on) unless
``--validate`` asks for the full schema.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

SCHEMA_VERSION = 1
CASE_STATUSES = ("pass", "fail", "error", "skip")
METRIC_STATUSES = frozenset({"pass", "fail", "skip"})
#: An artifact's ``file``: one plain name inside the case folder (the schema's ``artifact.file`` pattern).
ARTIFACT_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")


def case_schema() -> dict[str, Any]:
    """The JSON Schema of ``case.json`` (a fresh copy)."""
    loaded: dict[str, Any] = json.loads(files("evaljig_report").joinpath("schemas/case.schema.json").read_text("utf-8"))
    return loaded


@cache
def _validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]  # imported on first use: it costs ~100 ms

    return Draft202012Validator(case_schema())


def schema_errors(doc: Any) -> list[str]:
    """Every schema violation of ``doc`` as ``path: message``; empty when valid."""
    return [
        f"{'/'.join(str(p) for p in err.absolute_path) or '<root>'}: {err.message}"
        for err in sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    ]
