"""summary.md: the merged report in a form a pull request or a CI step summary can show."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from evaljig_report import atomic
from evaljig_report.rows import CaseRow

if TYPE_CHECKING:
    from evaljig_report.merge import MergeResult

MAX_LISTED = 50
ICONS = {"pass": "✅", "fail": "❌", "error": "💥", "skip": "⏭️"}


@dataclass
class MetricStat:
    """How one metric fared across all cases."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(("pass", "fail", "skip"), 0))
    score_sum: float = 0.0
    scored: int = 0

    @property
    def mean(self) -> float | None:
        return self.score_sum / self.scored if self.scored else None


@dataclass
class MetricStats:
    """Per-metric pass/fail/skip counts and mean scores, computed once per merge."""

    by_name: dict[str, MetricStat]

    @classmethod
    def of(cls, rows: Iterable[CaseRow]) -> MetricStats:
        by_name: dict[str, MetricStat] = {}
        for row in rows:
            for name, status, score, _, _ in row.metrics:
                stat = by_name.get(name)
                if stat is None:
                    stat = by_name[name] = MetricStat()
                stat.counts[status] += 1
                if score is not None:
                    stat.score_sum += score
                    stat.scored += 1
        return cls(dict(sorted(by_name.items())))


def _cell(text: str, limit: int = 160) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_summary(result: MergeResult, stats: MetricStats, html_name: str = "report.html") -> str:
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
    atomic.write_text(path, text)
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
