"""``evaljig-report comment``: one pull-request comment in Markdown, regressions first, never too long.

GitHub refuses a comment over 65,536 characters, so the text is capped at ``MAX_COMMENT`` (65,000):
sections come in order of importance (must-pass failures, regressions, disappeared, cases not passing,
improved, appeared, changed) and, when everything does not fit, the least important rows are left out
with an explicit ``N more … not shown`` line per section. The first line is a fixed marker, so a CI
step can find the comment it posted before and update it instead of adding another.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from evaljig_report._compare import MUST_PASS, Change, RunOutcomes, StatusScore, pass_k_line

MARKER = "<!-- evaljig-report -->"
MAX_COMMENT = 65_000
#: Room kept for a section's "not shown" line and the footer while rows are being added.
_RESERVE = 400
_CELL = 160


@dataclass
class Section:
    title: str
    header: list[str]
    rows: list[str] = field(default_factory=list)


def _cell(text: str, limit: int = _CELL) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _outcome(o: StatusScore | None) -> str:
    if o is None:
        return "-"
    text = o.status if o.score is None else f"{o.status} ({o.score:.3g})"
    return text if o.runs is None else f"{text}, {o.passes}/{o.runs} runs"


def _case(key: tuple[str, str, str]) -> str:
    session, suite, case_id = key
    return f"`{_cell(f'{suite}::{case_id}', 200)}` ({_cell(session, 40)})"


_TABLE = ["| case | metric | base | new |", "|---|---|---|---|"]

#: (change kind, section title), most important first.
_ORDER = (
    (MUST_PASS, "❗ Must pass, did not"),
    ("regressed", "❌ Regressed"),
    ("disappeared", "👻 Disappeared"),
    ("improved", "✅ Improved"),
    ("appeared", "🆕 Appeared"),
    ("changed", "🔀 Changed (not significant, or to/from skip)"),
)


def _change_row(c: Change) -> str:
    new = _outcome(c.new) + ("" if c.p_value is None else f", p={c.p_value:.3g}")
    return f"| {_case(c.key)} | {_cell(c.metric, 60)} | {_outcome(c.base)} | {new} |"


def _not_passing(run: RunOutcomes, listed: set[tuple[str, str, str]]) -> Section:
    """Cases of the run that did not pass and no change above already names."""
    section = Section("⚠️ Not passing", ["| case | status | metrics that did not pass |", "|---|---|---|"])
    for key, (status, metrics) in sorted(run.cases.items(), key=lambda kv: (kv[1][0] != "error", kv[0])):
        if status not in ("fail", "error") or key in listed:
            continue
        failed = [
            f"{n} ({m.passes}/{m.runs})" if m.runs else n
            for n, m in sorted(metrics.items())
            if m.counts[0] < m.counts[1]
        ]
        section.rows.append(f"| {_case(key)} | {status} | {_cell(', '.join(failed) or '-')} |")
    return section


def _headline(run: RunOutcomes, changes: list[Change] | None, gating: set[str]) -> str:
    statuses = [status for status, _ in run.cases.values()]
    counts = {s: statuses.count(s) for s in ("pass", "fail", "error", "skip")}
    tally = f"{len(statuses)} cases (" + ", ".join(f"{n} {s}" for s, n in counts.items()) + ")"
    if changes is None:
        verdict = (
            "✅ all passing"
            if counts["fail"] + counts["error"] == 0
            else f"⚠️ {counts['fail'] + counts['error']} not passing"
        )
        return f"## evaljig: {verdict} · {tally}"
    blocking = [c for c in changes if c.kind in gating]
    if not blocking:
        return f"## evaljig: ✅ no regressions · {tally}"
    kinds = {k: sum(c.kind == k for c in blocking) for k, _ in _ORDER}
    what = ", ".join(f"{n} {k}" for k, n in kinds.items() if n)
    return f"## evaljig: ❌ {what} · {tally}"


def render_comment(
    run: RunOutcomes,
    base: RunOutcomes | None,
    changes: list[Change] | None,
    *,
    gating: Iterable[str] = ("regressed", "disappeared", MUST_PASS),
    limit: int = MAX_COMMENT,
) -> str:
    """The comment: marker, verdict, what it was compared with, then sections most important first."""
    lines = [MARKER, _headline(run, changes, set(gating)), ""]
    if base is not None:
        lines += [f"Compared with `{_cell(base.source, 200)}` ({len(base.cases)} cases).", ""]
    passk = [line for line in (pass_k_line("new", run), base and pass_k_line("base", base)) if line]
    lines += [*(f"- {line}" for line in passk), *([""] if passk else [])]
    sections: list[Section] = []
    listed: set[tuple[str, str, str]] = set()
    for kind, title in _ORDER:
        rows = [c for c in changes or () if c.kind == kind]
        if rows:
            sections.append(Section(title, list(_TABLE), [_change_row(c) for c in rows]))
            if kind in (MUST_PASS, "regressed"):
                listed.update(c.key for c in rows)
        if kind == "disappeared":  # what fails now comes right after what regressed
            sections.append(_not_passing(run, listed))
    if changes is None:
        sections = [_not_passing(run, listed)]
    sections = [s for s in sections if s.rows]
    if changes is not None and not changes:
        lines += ["No differences from the base.", ""]
    footer = ["", "<sub>evaljig-report comment · the full report is in the run's merged report.html</sub>"]
    return _fit(lines, sections, footer, limit)


def _fit(head: list[str], sections: list[Section], footer: list[str], limit: int) -> str:
    """Add rows in order of importance while they fit; every section that lost rows says how many."""
    out = list(head)
    used = sum(len(line) + 1 for line in (*head, *footer))
    full = False
    for section in sections:
        block = [*([""] if out[-1] else []), f"### {section.title} ({len(section.rows)})", ""]
        shown: list[str] = []
        if not full:
            cost = sum(len(line) + 1 for line in (*block, *section.header))
            for row in section.rows:
                if used + cost + len(row) + 1 + _RESERVE > limit:
                    full = True
                    break
                shown.append(row)
                cost += len(row) + 1
        if shown:
            block += [*section.header, *shown]
        hidden = len(section.rows) - len(shown)
        if hidden:
            block += [*([""] if shown else []), f"_{hidden} more … not shown (see the full report)_"]
        out += block
        used += sum(len(line) + 1 for line in block)
    text = "\n".join([*out, *footer]) + "\n"
    while len(text) > limit:  # the reserve keeps this from happening; never post an over-long comment
        text = text[: text.rstrip("\n").rfind("\n")] + "\n"
    return text
