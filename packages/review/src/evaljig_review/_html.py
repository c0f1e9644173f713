"""The review as one self-contained HTML page (``--html FILE``): no external asset, readable on a phone.

Entries are listed most important first, each with its category, kind and group, and its
key-path changes in a ``<details>`` block (value changes open). Category checkboxes filter the
list; the chosen filter is kept in the URL's fragment (``#hide=format-only,reordered``) so a
shared link shows the same view. Everything is escaped; the script is small and inline.
"""

from __future__ import annotations

from html import escape

from evaljig_review._review import Entry, Review
from evaljig_review._semantic import CATEGORIES, VALUE

_CSS = """
:root { color-scheme: light dark; --fg: #1f2328; --bg: #fff; --muted: #59636e; --line: #d1d9e0;
  --value: #9a6700; --new: #1a7f37; --removed: #cf222e; --quiet: #59636e; --code: #f6f8fa; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d;
  --value: #d29922; --new: #3fb950; --removed: #f85149; --quiet: #9198a1; --code: #151b23; } }
* { box-sizing: border-box; }
body { margin: 0; padding: 1rem; font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 72rem; margin: 0 auto; }
h1 { font-size: 1.4rem; margin: 0 0 .5rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
code, pre { font: 13px/1.45 ui-monospace, monospace; }
pre { background: var(--code); padding: .5rem .75rem; border-radius: 6px; margin: .25rem 0 0;
  white-space: pre-wrap; overflow-wrap: anywhere; }
.summary, .filters { display: flex; flex-wrap: wrap; gap: .5rem; margin: .5rem 0; }
.filters label { border: 1px solid var(--line); border-radius: 1rem; padding: .1rem .6rem; cursor: pointer; }
ul.entries { list-style: none; padding: 0; margin: 0; }
li.entry { border-top: 1px solid var(--line); padding: .5rem 0; overflow-wrap: anywhere; }
li.entry[hidden] { display: none; }
.badge { display: inline-block; font-size: 12px; font-weight: 600; border-radius: 1rem; padding: 0 .5rem;
  border: 1px solid currentColor; margin-right: .4rem; white-space: nowrap; }
.c-value-changed, .c-bytes-changed { color: var(--value); }
.c-new { color: var(--new); } .c-removed { color: var(--removed); }
.c-reordered, .c-format-only { color: var(--quiet); }
.where { color: var(--muted); font-size: 13px; }
.stale li { margin: .25rem 0; overflow-wrap: anywhere; }
summary { cursor: pointer; color: var(--muted); font-size: 13px; }
"""

_SCRIPT = """
(function () {
  var boxes = Array.prototype.slice.call(document.querySelectorAll('.filters input'));
  var entries = Array.prototype.slice.call(document.querySelectorAll('li.entry'));
  function apply() {
    var hidden = boxes.filter(function (b) { return !b.checked; }).map(function (b) { return b.value; });
    entries.forEach(function (e) { e.hidden = hidden.indexOf(e.dataset.category) >= 0; });
    var shown = entries.filter(function (e) { return !e.hidden; }).length;
    document.getElementById('shown').textContent = shown + ' of ' + entries.length + ' shown';
    var hash = hidden.length ? '#hide=' + hidden.join(',') : ' ';
    if (location.hash !== hash.trim()) { history.replaceState(null, '', hash); }
  }
  var wanted = /^#hide=(.*)$/.exec(location.hash);
  if (wanted) {
    var hide = decodeURIComponent(wanted[1]).split(',');
    boxes.forEach(function (b) { b.checked = hide.indexOf(b.value) < 0; });
  }
  boxes.forEach(function (b) { b.addEventListener('change', apply); });
  apply();
})();
"""


def _entry(entry: Entry) -> str:
    compared = entry.comparison
    lines = [c.text() for c in compared.changes]
    for exchange in compared.exchanges:
        lines.append(f"{exchange.status}: {exchange.request}")
        lines += [f"    {c.text()}" for c in exchange.changes]
    if compared.omitted:
        lines.append(f"… {compared.omitted} more")
    details = ""
    if lines:
        opened = " open" if entry.category == VALUE else ""
        text = escape("\n".join(lines))
        details = f"<details{opened}><summary>{len(lines)} line(s)</summary><pre>{text}</pre></details>"
    note = f' <span class="where">{escape(compared.note)}</span>' if compared.note else ""
    return (
        f'<li class="entry" data-category="{entry.category}" data-kind="{entry.kind}" data-path="{escape(entry.path)}">'
        f'<span class="badge c-{entry.category}">{entry.category}</span><code>{escape(entry.path)}</code>{note}'
        f'<div class="where">{escape(entry.kind)} · {escape(entry.group)} · {escape(entry.item)}</div>{details}</li>'
    )


def render_html(review: Review) -> str:
    counts = review.counts()
    chips = (
        "".join(f'<span class="badge c-{c}">{n} {c}</span>' for c, n in counts.items() if n)
        or "<span>nothing changed</span>"
    )
    filters = "".join(
        f'<label><input type="checkbox" value="{c}" checked> {c} ({counts[c]})</label>' for c in CATEGORIES if counts[c]
    )
    stale = ""
    if review.stale:
        items = "".join(
            f"<li><code>{escape(s.path)}</code> (builder <code>{escape(s.builder)}</code>): {escape(s.text)}</li>"
            for s in review.stale
        )
        stale = f'<section class="stale"><h2>Stale recordings ({len(review.stale)})</h2><ul>{items}</ul></section>'
    notes = "".join(f"<li>{escape(n)}</li>" for n in review.notes)
    notes_html = f"<h2>Notes</h2><ul>{notes}</ul>" if notes else ""
    entries = "".join(_entry(e) for e in review.ordered())
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>evaljig review against {escape(review.base)}</title><style>{_CSS}</style></head><body><main>"
        f'<h1>evaljig review <span class="where">against <code>{escape(review.base)}</code></span></h1>'
        f'<div class="summary">{chips}</div>{stale}'
        f'<h2>Changed files <span class="where" id="shown"></span></h2><div class="filters">{filters}</div>'
        f'<ul class="entries">{entries}</ul>{notes_html}</main><script>{_SCRIPT}</script></body></html>\n'
    )
