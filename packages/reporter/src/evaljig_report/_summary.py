"""summary.md: the merged report in a form a pull request or a CI step summary can show."""

from __future__ import annotations

from pathlib import Path

from evaljig_common import write_text_atomic
from evaljig_report._collect import MergeResult, MetricStats
from evaljig_report._layout import HTML_FILE

MAX_LISTED = 50
ICONS = {"pass": "✅", "fail": "❌", "error": "💥", "skip": "⏭️"}


def _cell(text: str, limit: int = 160) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_summary(result: MergeResult, stats: MetricStats, html_name: str = HTML_FILE) -> str:
    counts = result.counts
    total = len(result.rows)
    lines = [
        f"## evaljig report: {total} cases",
        "",
        " · ".join(f"{ICONS[s]} {counts[s]} {s}" for s in ("pass", "fail", "error", "skip")),
        "",
    ]
    sessions: dict[str, dict[str, int]] = {}
    for row in result.rows:
        per = sessions.setdefault(row.session, dict.fromkeys(("pass", "fail", "error", "skip"), 0))
        per[row.status] += 1
    if sessions:
        lines += ["| session | cases | pass | fail | error | skip |", "|---|---:|---:|---:|---:|---:|"]
        lines += [
            f"| {_cell(name)} | {sum(c.values())} | {c['pass']} | {c['fail']} | {c['error']} | {c['skip']} |"
            for name, c in sorted(sessions.items())
        ]
        lines.append("")
    if stats.by_name:
        lines += ["### Metrics", "", "| metric | pass | fail | skip | mean score |", "|---|---:|---:|---:|---:|"]
        for name, stat in stats.by_name.items():
            mean = "-" if stat.mean is None else f"{stat.mean:.3f}"
            c = stat.counts
            lines.append(f"| {_cell(name)} | {c['pass']} | {c['fail']} | {c['skip']} | {mean} |")
        lines.append("")
    repeated = [m for r in result.rows for m in r.metrics if m.runs]
    if repeated:  # --evaljig-repeats: how many metrics passed every run (pass^k) and at least one (pass@k)
        every = sum(m.passes == m.runs for m in repeated)
        some = sum(bool(m.passes) for m in repeated)
        lines += [
            f"Repeated cases (up to k={max(m.runs or 0 for m in repeated)} runs): pass^k {every}/{len(repeated)} "
            f"metrics passed every run · pass@k {some}/{len(repeated)} passed at least once.",
            "",
        ]
    bad = [r for r in result.rows if r.status in ("fail", "error")]
    if bad:
        lines += [f"### Not passing ({len(bad)})", "", "| status | session | case | why |", "|---|---|---|---|"]
        lines += [
            f"| {ICONS[r.status]} {r.status} | {_cell(r.session)} | `{_cell(r.suite)}::{_cell(r.case_id)}` "
            f"| {_cell(r.why())} |"
            for r in bad[:MAX_LISTED]
        ]
        if len(bad) > MAX_LISTED:
            lines.append(f"| … | | {len(bad) - MAX_LISTED} more in {html_name} | |")
        lines.append("")
    if result.problems:
        lines += [f"### Problems ({len(result.problems)} files could not be used)", ""]
        lines += [f"- `{p.path}`: {_cell(p.problem, 300)}" for p in result.problems[:MAX_LISTED]]
        if len(result.problems) > MAX_LISTED:
            lines.append(f"- … {len(result.problems) - MAX_LISTED} more in index.json")
        lines.append("")
    if result.duplicates:
        lines += [f"{result.duplicates} duplicate case files were merged once.", ""]
    lines.append(f"Full report: `{html_name}` (per-case drill-down), `index.json`, `junit.xml`.")
    return "\n".join(lines) + "\n"


def write_summary(path: Path, result: MergeResult, stats: MetricStats) -> str:
    text = render_summary(result, stats)
    write_text_atomic(path, text)
    return text


def append_step_summary(target: str | None, text: str) -> str | None:
    """Append ``text`` to the CI step summary file ``target`` (if set); returns a warning instead of raising."""
    if not target:
        return None
    try:
        with Path(target).open("a", encoding="utf-8") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")
    except OSError as exc:
        return f"cannot append to GITHUB_STEP_SUMMARY {target!r}: {exc.strerror or exc}"
    return None
