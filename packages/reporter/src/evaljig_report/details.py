"""The per-case drill-down the HTML embeds: case, inference, metrics and artifact previews."""

from __future__ import annotations

import base64
import csv
import io
from pathlib import Path
from typing import Any

import orjson

from evaljig_report.rows import CaseRow

MAX_IMAGE_BYTES = 2 * 1024 * 1024
CSV_PREVIEW_BYTES = 64 * 1024
CSV_PREVIEW_ROWS = 20
CSV_PREVIEW_COLS = 30
CSV_CELL_CHARS = 200


def _load(path: str) -> dict[str, Any] | None:
    try:
        doc = orjson.loads(Path(path).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return doc if isinstance(doc, dict) else None


def _csv_preview(path: Path) -> tuple[list[list[str]], bool]:
    with path.open("rb") as fh:
        head = fh.read(CSV_PREVIEW_BYTES + 1)
    truncated = len(head) > CSV_PREVIEW_BYTES
    text = head[:CSV_PREVIEW_BYTES].decode("utf-8", errors="replace")
    rows = []
    for n, row in enumerate(csv.reader(io.StringIO(text))):
        if n >= CSV_PREVIEW_ROWS:
            truncated = True
            break
        rows.append([cell[:CSV_CELL_CHARS] for cell in row[:CSV_PREVIEW_COLS]])
    return rows, truncated


def _artifact(entry: dict[str, Any], case_dir: Path, rel_dir: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        k: entry.get(k) for k in ("name", "mime_type", "status", "file", "bytes", "reason") if k in entry
    }
    file_name = entry.get("file")
    if entry.get("status") != "written" or not isinstance(file_name, str) or "/" in file_name or ".." in file_name:
        return out
    path = case_dir / file_name
    out["href"] = f"{rel_dir}/{file_name}"
    mime = str(entry.get("mime_type", ""))
    try:
        if mime.startswith("image/"):
            if path.stat().st_size <= MAX_IMAGE_BYTES:
                out["data_uri"] = f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"
            else:
                out["note"] = f"larger than {MAX_IMAGE_BYTES // 1024} KiB: not embedded"
        elif mime == "text/csv":
            out["csv"], out["csv_truncated"] = _csv_preview(path)
    except OSError as exc:
        out["note"] = f"unreadable: {exc.strerror or exc}"
    return out


def case_detail(row: CaseRow, rel_paths: list[str]) -> dict[str, Any]:
    """Everything the drill-down shows for ``row``, read back from its case file(s)."""
    detail: dict[str, Any] = {"paths": rel_paths, "metrics": [], "artifacts": [], "errors": list(row.errors)}
    seen: set[str] = set()
    for path, rel in zip(row.paths, rel_paths, strict=True):
        doc = _load(path)
        if doc is None:
            detail["errors"].append(f"{rel}: could not be read back for the report")
            continue
        if "case" not in detail:
            detail.update(source=doc.get("source"), case=doc.get("case"), inference=doc.get("inference"))
        for metric in doc.get("metrics") or []:
            if isinstance(metric, dict) and metric.get("name") not in seen:
                seen.add(str(metric.get("name")))
                detail["metrics"].append(metric)
        if not detail["artifacts"] and doc.get("artifacts"):
            rel_dir = rel.rsplit("/", 1)[0]
            detail["artifacts"] = [
                _artifact(a, Path(path).parent, rel_dir) for a in doc["artifacts"] if isinstance(a, dict)
            ]
    return detail
