"""report.html: one self-contained file (inline CSS and JS, no external request) with a drill-down.

The page's Content-Security-Policy allows exactly one script: the page's own, by its sha256,
computed when the page is written; no other inline script, event handler attribute or
``javascript:`` URL can run. The data blocks are ``application/json``, which never run.

Rows come failures first (error, fail, skip, pass; then suite, case and session) so what went
wrong is on the first screen. Summary rows for every case are embedded as one JSON block; each
embedded case detail is its own JSON block, parsed only when a row is opened, so large runs
stay responsive. Runs of more than ``EMBED_ALL_LIMIT`` cases embed details for cases that did
not pass only (at most ``MAX_DETAILS``, errors and failures first); the rows of passing cases
link to their case files instead.
"""

from __future__ import annotations

import base64
import hashlib
from importlib.resources import files
from pathlib import Path
from typing import IO, Any

import orjson

from evaljig_common import open_atomic_binary
from evaljig_report._collect import MergeResult, MetricStats
from evaljig_report._details import case_detail
from evaljig_report._layout import RelativePaths
from evaljig_report._rows import CaseRow

EMBED_ALL_LIMIT = 2000
MAX_DETAILS = 5000
_CHUNK = 1000
#: The order rows are listed in: what needs a look first.
STATUS_ORDER = {"error": 0, "fail": 1, "skip": 2, "pass": 3}


def _script_json(value: Any) -> bytes:
    """JSON safe inside ``<script>``: ``<`` is escaped so no ``</script>`` can end the block early."""
    return orjson.dumps(value).replace(b"<", b"\\u003c")


def _asset(name: str) -> str:
    return files("evaljig_report").joinpath(f"templates/{name}").read_text("utf-8")


#: Where the page template's CSP names the one script it allows.
SCRIPT_HASH_MARK = "SCRIPT_HASH"


def script_source(script: bytes) -> str:
    """The CSP source that allows exactly ``script`` (the bytes between ``<script>`` and ``</script>``)."""
    return f"'sha256-{base64.b64encode(hashlib.sha256(script).digest()).decode('ascii')}'"


def page_shell(script: bytes) -> bytes:
    """The page up to its data blocks, its CSP allowing ``script`` and no other script."""
    head = _asset("report.html")
    if head.count(SCRIPT_HASH_MARK) != 1:  # pragma: no cover - guards edits of the template
        raise RuntimeError(f"templates/report.html must name {SCRIPT_HASH_MARK} once, in its CSP")
    return head.replace(SCRIPT_HASH_MARK, script_source(script)).encode()


def _block(fh: IO[bytes], block_id: str, value: Any) -> None:
    data = value if isinstance(value, bytes) else _script_json(value)
    fh.write(f'<script type="application/json" id="{block_id}">'.encode() + data + b"</script>\n")


def _detail_json(row: CaseRow, rel_paths: list[str]) -> bytes:
    """The drill-down of ``row`` as script-safe JSON; one orjson cannot write (nested past its 255 levels,
    e.g. a case file rewritten since the merge read it) becomes the row alone, never a failed merge."""
    try:
        return _script_json(case_detail(row, rel_paths))
    except orjson.JSONEncodeError:
        note = "the case file is nested too deeply to embed: open it beside the report"
        return _script_json({"paths": rel_paths, "metrics": [], "artifacts": [], "errors": [*row.errors, note]})


def failures_first(rows: list[CaseRow]) -> list[CaseRow]:
    """``rows`` sorted by status (error, fail, skip, pass), then suite, case and session."""
    return sorted(rows, key=lambda r: (STATUS_ORDER[r.status], r.suite, r.case_id, r.session))


def session_stats(rows: list[CaseRow]) -> dict[str, dict[str, Any]]:
    """Per session: case counts by status and the mean of every metric score recorded in it."""
    sessions: dict[str, dict[str, Any]] = {}
    sums: dict[str, list[float]] = {}
    for row in rows:
        stat = sessions.get(row.session)
        if stat is None:
            stat = sessions[row.session] = {"cases": 0, "pass": 0, "fail": 0, "error": 0, "skip": 0, "mean": None}
            sums[row.session] = [0.0, 0]
        stat["cases"] += 1
        stat[row.status] += 1
        acc = sums[row.session]
        for metric in row.metrics:
            if metric.score is not None:
                acc[0] += metric.score
                acc[1] += 1
    for name, (total, scored) in sums.items():
        sessions[name]["mean"] = total / scored if scored else None
    return dict(sorted(sessions.items()))


def write_html(path: Path, result: MergeResult, stats: MetricStats, generated: str) -> None:
    """Stream the report: page shell, rows, details of the cases it embeds, then the script."""
    rows = failures_first(result.rows)
    embed_all = len(rows) <= EMBED_ALL_LIMIT
    note = "" if embed_all else f"details embedded for cases that did not pass only (run has over {EMBED_ALL_LIMIT})"
    counts = result.counts
    meta = {
        "generated_at": generated,
        "totals": {"cases": len(rows), **counts},
        "sessions": session_stats(rows),
        "metrics": {n: {**s.counts, "mean": s.mean} for n, s in stats.by_name.items()},
        "problems": [{"path": p.path, "problem": p.problem} for p in result.problems],
        "duplicates_merged": result.duplicates,
        "details_note": note,
    }
    rel = RelativePaths(result.out_dir)
    script = b"\n" + _asset("report.js").encode()
    with open_atomic_binary(path) as fh:
        fh.write(page_shell(script))
        _block(fh, "evaljig-meta", meta)
        embedded = 0
        fh.write(b'<script type="application/json" id="evaljig-rows">[')
        for start in range(0, len(rows), _CHUNK):
            chunk = []
            for n, row in enumerate(rows[start : start + _CHUNK], start):
                want = embed_all or (row.status != "pass" and embedded < MAX_DETAILS)
                embedded += want
                chunk.append(
                    [
                        n,
                        row.session,
                        row.suite,
                        row.case_id,
                        row.status,
                        [
                            (m.name, m.status, m.score)
                            if m.runs is None
                            else (m.name, m.status, m.score, m.runs, m.passes)
                            for m in row.metrics
                        ],
                        row.why(),
                        want,
                        round(row.duration_s, 6),
                    ]
                )
            fh.write((b"," if start else b"") + _script_json(chunk)[1:-1])
        fh.write(b"]</script>\n")
        embedded = 0
        for n, row in enumerate(rows):
            if embed_all or (row.status != "pass" and embedded < MAX_DETAILS):
                embedded += 1
                _block(fh, f"d{n}", _detail_json(row, [rel(p) for p in row.paths]))
        fh.write(b"<script>" + script + b"</script>\n</body>\n</html>\n")
