"""``evaljig-report merge``: many worker, session and shard folders -> one ``merged/`` folder, written whole.

Streaming: case files are read one at a time and only a small row per case is kept (``collect``);
the outputs are written row by row, and the HTML re-reads only the case files it embeds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import orjson

from evaljig_common import open_atomic_binary
from evaljig_report._collect import MergeResult, MetricStats, collect
from evaljig_report._discover import MAX_CASE_BYTES
from evaljig_report._html import write_html
from evaljig_report._junit import write_junit
from evaljig_report._layout import HTML_FILE, INDEX_FILE, JUNIT_FILE, SUMMARY_FILE, RelativePaths
from evaljig_report._publish import (
    check_replaceable,
    merge_lock,
    remove_if_empty,
    remove_stale_staging,
    staged_output,
)
from evaljig_report._rows import CaseRow, MetricRow
from evaljig_report._schema import SCHEMA_VERSION
from evaljig_report._summary import append_step_summary, write_summary


def generated_at(env: Mapping[str, str] | None = None) -> str:
    """``SOURCE_DATE_EPOCH`` when set (reproducible builds: same inputs, same bytes), else the current time."""
    env = os.environ if env is None else env
    epoch = env.get("SOURCE_DATE_EPOCH", "").strip()
    if not epoch:
        return datetime.now(UTC).isoformat(timespec="seconds")
    try:
        return datetime.fromtimestamp(int(epoch), UTC).isoformat(timespec="seconds")
    except (ValueError, OverflowError, OSError):
        raise ValueError(f"SOURCE_DATE_EPOCH must be whole seconds since 1970-01-01 UTC, not {epoch!r}") from None


def merge(
    inputs: Sequence[Path],
    out_dir: Path,
    *,
    validate: bool = False,
    step_summary: Path | None = None,
    generated: str | None = None,
    max_bytes: int = MAX_CASE_BYTES,
) -> MergeResult:
    """Merge ``inputs`` into ``out_dir`` (index.json, summary.md, report.html, junit.xml), all or nothing.

    ``generated`` is the report's timestamp (default: :func:`generated_at`). The folder is
    written as one unit and merges into one folder take turns (see ``_publish``); a folder
    holding anything a merge does not write raises ``MergeError`` and is left as it is.
    """
    generated = generated or generated_at()
    created = not out_dir.exists()
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir.resolve() if out_dir.is_symlink() else out_dir
    try:
        with merge_lock(target):
            check_replaceable(target)
            remove_stale_staging(target)  # before reading: inside an input it would be listed as a partial write
            result = collect(inputs, skip=[out_dir, target], validate=validate, max_bytes=max_bytes)
            result.out_dir = out_dir
            stats = MetricStats.of(result.rows)
            with staged_output(target) as stage:
                write_index(stage / INDEX_FILE, result, generated)
                write_junit(stage / JUNIT_FILE, result.rows)
                summary = write_summary(stage / SUMMARY_FILE, result, stats)
                write_html(stage / HTML_FILE, result, stats, generated)
    except BaseException:
        if created:
            remove_if_empty(out_dir)
        raise
    if step_summary is not None and (warning := append_step_summary(str(step_summary), summary)):
        result.warnings.append(warning)
    return result


def metric_json(m: MetricRow) -> dict[str, object]:
    """A metric of a case row; ``runs`` and ``passes`` only for a repeated case (``--evaljig-repeats``)."""
    doc: dict[str, object] = {"name": m.name, "metric": m.name, "status": m.status}
    doc.update(score=m.score, reason=m.reason)
    if m.runs is not None:
        doc.update(runs=m.runs, passes=m.passes)
    return doc


def row_json(row: CaseRow, rel: RelativePaths) -> dict[str, object]:
    """One case of index.json; ``node``, ``tool_id``, ``inference_status`` and ``metric`` are the proposal's names."""
    return {
        "session": row.session,
        "suite": row.suite,
        "node": row.suite,
        "case_id": row.case_id,
        "tool_id": row.tool_id,
        "kind": row.kind,
        "status": row.status,
        "inference_status": row.inference_status,
        "metrics": [metric_json(m) for m in row.metrics],
        "errors": row.errors,
        "duration_s": round(row.duration_s, 6),
        "paths": [rel(p) for p in row.paths],
    }


def write_index(path: Path, result: MergeResult, generated: str) -> None:
    """index.json, streamed: the header, then one case row per line."""
    header = {
        "schema_version": SCHEMA_VERSION,
        "kind": "merged",
        "generated_at": generated,
        "inputs": result.inputs,
        "runs": sorted(result.runs),
        "totals": {"cases": len(result.rows), **result.counts},
        "files_read": result.files_read,
        "duplicates_merged": result.duplicates,
        "sessions": _sessions(result.rows),
        "problems": [{"path": p.path, "problem": p.problem} for p in result.problems],
    }
    head = orjson.dumps(header, option=orjson.OPT_INDENT_2)
    rel = RelativePaths(result.out_dir)
    with open_atomic_binary(path) as fh:
        fh.write(head[:-2])  # reopen the object: drop the closing "\n}"
        fh.write(b',\n  "cases": [')
        for n, row in enumerate(result.rows):
            fh.write(b"\n    " if n == 0 else b",\n    ")
            fh.write(orjson.dumps(row_json(row, rel)))
        fh.write(b"\n  ]\n}\n" if result.rows else b"]\n}\n")


def _sessions(rows: list[CaseRow]) -> dict[str, dict[str, int]]:
    sessions: dict[str, dict[str, int]] = {}
    for row in rows:
        counts = sessions.setdefault(row.session, dict.fromkeys(("cases", "pass", "fail", "error", "skip"), 0))
        counts["cases"] += 1
        counts[row.status] += 1
    return sessions
