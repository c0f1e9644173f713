"""The review as one pull-request comment: ``--markdown``.

GitHub refuses a comment over 65,536 characters, so the text is kept to :data:`LIMIT`: stale
recordings and value changes come first, format-only and reordered entries last, and what does
not fit is cut from the end with an explicit ``N more entries not shown`` line. The first line
is a fixed marker (:data:`MARKER`) so that a CI step can find its earlier comment and update it
instead of adding another.
"""

from __future__ import annotations

from evaljig_review._review import Entry, Review
from evaljig_review._semantic import CATEGORIES, FORMAT, REORDERED

MARKER = "<!-- evaljig-review -->"
LIMIT = 65_000
TITLES = {
    "value-changed": "Value changed",
    "bytes-changed": "Bytes changed (not parsed)",
    "new": "New",
    "removed": "Removed",
    "reordered": "Reordered only",
    "format-only": "Format only",
}
#: Lines of one entry's details before they are cut (the JSON and HTML views have them all).
MAX_DETAIL_LINES = 40


def _code(text: str) -> str:
    """Inline code that survives backticks in the text."""
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}" if fence == "`" else f"{fence} {text} {fence}"


def _entry_block(entry: Entry) -> str:
    where = f"{entry.kind} {_code(entry.group)}" if entry.group != entry.path else entry.kind
    head = f"- {_code(entry.path)} — {where}"
    compared = entry.comparison
    if compared.note:
        head += f" — {compared.note}"
    if entry.category in (FORMAT, REORDERED) or not (compared.changes or compared.exchanges):
        return head + "\n"
    lines = [c.text() for c in compared.changes]
    for exchange in compared.exchanges:
        lines.append(f"{exchange.status}: {exchange.request}")
        lines += [f"    {c.text()}" for c in exchange.changes]
    more = compared.omitted + max(0, len(lines) - MAX_DETAIL_LINES)
    lines = lines[:MAX_DETAIL_LINES]
    if more:
        lines.append(f"… {more} more")
    body = "\n".join(lines).replace("```", "'''")
    return f"{head}\n\n  ```text\n" + "".join(f"  {line}\n" for line in body.splitlines()) + "  ```\n"


def _summary(review: Review) -> str:
    counts = review.counts()
    shown = ", ".join(f"{n} {c}" for c, n in counts.items() if n)
    total = len(review.entries)
    if not total and not review.stale:
        return f"No golden, fixture, cassette or baseline changed against `{review.base}`.\n"
    stale = f"; **{len(review.stale)} stale recording(s)**" if review.stale else ""
    return f"{total} changed file(s) against `{review.base}`: {shown or 'none'}{stale}.\n"


def render_markdown(review: Review, limit: int = LIMIT) -> str:
    """The comment text, at most ``limit`` characters."""
    head = f"{MARKER}\n## evaljig review\n\n{_summary(review)}"
    blocks: list[str] = []
    if review.stale:
        lines = ["\n### Stale recordings\n\nRecorded for inputs that changed since; re-record them.\n\n"]
        lines += [f"- {_code(s.path)} (builder {_code(s.builder)}): {s.text}\n" for s in review.stale]
        blocks.append("".join(lines))
    ordered = review.ordered()
    sections: list[tuple[str, list[str]]] = []
    for category in CATEGORIES:
        entries = [e for e in ordered if e.category == category]
        if entries:
            sections.append((f"\n### {TITLES[category]} ({len(entries)})\n\n", [_entry_block(e) for e in entries]))
    notes = "".join(f"- {n}\n" for n in review.notes)
    tail = f"\n<details><summary>Notes</summary>\n\n{notes}\n</details>\n" if notes else ""
    text = head
    for block in blocks:
        text += block
    total = sum(len(items) for _, items in sections)
    shown = 0
    cut = False
    for title, items in sections:
        if cut:
            break
        for index, item in enumerate(items):
            piece = (title if index == 0 else "") + item
            if len(text) + len(piece) + len(tail) + 200 > limit:
                cut = True
                break
            text += piece
            shown += 1
    if cut:
        text += f"\n**{total - shown} more entries not shown** (the comment is limited to {limit:,} characters;"
        text += " run `evaljig review` locally, or `--json` / `--html`, for all of them).\n"
    if len(text) + len(tail) <= limit:
        text += tail
    return text[:limit]
