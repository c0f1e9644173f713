"""The per-case drill-down the HTML embeds: case, inference, metrics, tracebacks and artifact previews.

Artifact files are read only when ``file`` is a plain name (the schema's pattern) and the
file is a regular file: a symlink pointing out of the report tree or a FIFO is never opened.
Images up to ``MAX_IMAGE_BYTES`` and CSV files up to ``CSV_PREVIEW_BYTES`` are embedded as a
``data:`` URI, so they can be downloaded from a report copied on its own.

A written artifact whose file type cannot run script when opened on its own (``PASSIVE_SUFFIXES``)
keeps ``href``, its path beside the report: each segment percent-encoded and the whole prefixed
with ``./``, so no folder name (``javascript:…``) is ever read as a URL scheme. An SVG (or any
other type) is never linked: opened as a document its ``onload`` would run, with the report's
folder as its origin. It is shown through ``<img>`` only, where SVG runs no script, and its
download link (``download_uri``) is typed ``application/octet-stream``.
"""

from __future__ import annotations

import base64
import csv
import errno
import io
import os
import stat
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from evaljig_common import StrictJSONError, loads_strict
from evaljig_report._discover import MAX_CASE_DEPTH
from evaljig_report._rows import CaseRow, outcome_of
from evaljig_report._schema import ARTIFACT_FILE

MAX_IMAGE_BYTES = 2 * 1024 * 1024
#: File types a browser opens as inert content (raster images, CSV): the only artifacts linked beside the report.
PASSIVE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".csv"})
#: The types whose ``data:`` URI may be a download link as it is; any other is downloaded as bytes.
PASSIVE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "text/csv"})
CSV_PREVIEW_BYTES = 64 * 1024
CSV_PREVIEW_ROWS = 20
CSV_PREVIEW_COLS = 30
CSV_CELL_CHARS = 200

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


class NotRegularFileError(OSError):
    """The artifact is a symlink, FIFO, device or folder: it is not read."""


def _load(path: str) -> dict[str, Any] | None:
    try:
        doc = loads_strict(Path(path).read_bytes(), max_depth=MAX_CASE_DEPTH)
    except (OSError, StrictJSONError):  # changed since the merge read it: the drill-down shows the row alone
        return None
    return doc if isinstance(doc, dict) else None


def _read_regular(path: Path, limit: int) -> bytes:
    """Up to ``limit + 1`` bytes of ``path``, which must be a regular file and not a symlink."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegularFileError("a symbolic link: not followed") from None
        raise
    with os.fdopen(fd, "rb") as fh:  # owns the descriptor from here
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise NotRegularFileError("not a regular file: not read")
        return fh.read(limit + 1)


def _csv_preview(head: bytes) -> tuple[list[list[str]], bool]:
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
    if entry.get("status") != "written" or not isinstance(file_name, str):
        return out
    if not ARTIFACT_FILE.fullmatch(file_name):
        out["note"] = "file is not a plain file name in the case folder: not read"
        return out
    path = case_dir / file_name
    mime = str(entry.get("mime_type", ""))
    if PurePosixPath(file_name).suffix.lower() in PASSIVE_SUFFIXES:
        out["href"] = link_href(f"{rel_dir}/{file_name}")
    else:
        out["note"] = (
            f"not linked: opened on its own, a {PurePosixPath(file_name).suffix or 'suffix-less'} file can run script"
        )
    try:
        if mime.startswith("image/"):
            data = _read_regular(path, MAX_IMAGE_BYTES)
            if len(data) <= MAX_IMAGE_BYTES:
                encoded = base64.b64encode(data).decode("ascii")
                out["data_uri"] = f"data:{mime};base64,{encoded}"
                if mime not in PASSIVE_TYPES:
                    out["download_uri"] = f"data:application/octet-stream;base64,{encoded}"
            else:
                out["note"] = f"larger than {MAX_IMAGE_BYTES // 1024} KiB: not embedded"
        elif mime == "text/csv":
            data = _read_regular(path, CSV_PREVIEW_BYTES)
            out["csv"], out["csv_truncated"] = _csv_preview(data)
            if len(data) <= CSV_PREVIEW_BYTES:
                out["data_uri"] = f"data:text/csv;base64,{base64.b64encode(data).decode('ascii')}"
    except NotRegularFileError as exc:
        out["note"] = str(exc)
        out.pop("href", None)
    except OSError as exc:
        out["note"] = f"unreadable: {exc.strerror or exc}"
    return out


def link_href(rel_path: str) -> str:
    """``rel_path`` (``/``-separated, relative) as a link that can only mean a file: segments encoded, ``./`` first."""
    return "./" + "/".join(quote(segment, safe="") for segment in rel_path.split("/"))


def _kept_metrics(row: CaseRow, docs: list[dict[str, Any]]) -> list[Any]:
    """Per metric, the full record of the outcome the row kept (the worst one, when files disagree)."""
    wanted = {m.name: m.outcome for m in row.metrics}
    chosen: dict[str, Any] = {}
    for doc in docs:
        for metric in doc.get("metrics") or []:
            name = metric.get("name") if isinstance(metric, dict) else None
            if isinstance(name, str) and name not in chosen and wanted.get(name) == outcome_of(metric):
                chosen[name] = metric
    return [chosen[name] for name in wanted if name in chosen]


def _tracebacks(docs: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Each distinct ``{where, message, traceback}`` of the case's files, in the order first seen."""
    seen: dict[tuple[str, str, str], dict[str, str]] = {}
    for doc in docs:
        entries = doc.get("tracebacks")
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict):
                continue
            where, message, text = (entry.get(k) for k in ("where", "message", "traceback"))
            if isinstance(where, str) and isinstance(message, str) and isinstance(text, str):
                seen.setdefault((where, message, text), {"where": where, "message": message, "traceback": text})
    return list(seen.values())


def case_detail(row: CaseRow, rel_paths: list[str]) -> dict[str, Any]:
    """Everything the drill-down shows for ``row``, read back from its case file(s)."""
    detail: dict[str, Any] = {"paths": rel_paths, "metrics": [], "artifacts": [], "errors": list(row.errors)}
    docs = []
    for path, rel in zip(row.paths, rel_paths, strict=True):
        doc = _load(path)
        if doc is None:
            detail["errors"].append(f"{rel}: could not be read back for the report")
            continue
        docs.append(doc)
        if "case" not in detail:
            detail.update(source=doc.get("source"), case=doc.get("case"), inference=doc.get("inference"))
        if not detail["artifacts"] and doc.get("artifacts"):
            rel_dir = rel.rsplit("/", 1)[0]
            detail["artifacts"] = [
                _artifact(a, Path(path).parent, rel_dir) for a in doc["artifacts"] if isinstance(a, dict)
            ]
    detail["metrics"] = _kept_metrics(row, docs)
    detail["tracebacks"] = _tracebacks(docs)
    return detail
