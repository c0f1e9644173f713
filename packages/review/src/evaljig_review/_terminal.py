"""The review in a terminal (rich): grouped by kind and group, each entry with its category and key-path changes."""

from __future__ import annotations

from itertools import groupby

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from evaljig_review._review import KINDS, Review
from evaljig_review._semantic import CATEGORIES

STYLES = {
    "value-changed": "bold yellow",
    "bytes-changed": "yellow",
    "new": "green",
    "removed": "red",
    "reordered": "cyan",
    "format-only": "dim",
}
PLURAL = {"golden": "Goldens", "fixture": "Fixtures", "cassette": "Cassettes", "baseline": "Baselines"}


def render_terminal(review: Review, console: Console) -> None:
    counts = review.counts()
    summary = ", ".join(f"[{STYLES[c]}]{n} {c}[/]" for c, n in counts.items() if n) or "nothing changed"
    console.print(f"[bold]evaljig review[/] against [bold]{escape(review.base)}[/]: {summary}", highlight=False)
    if review.stale:
        console.print(f"\n[bold red]Stale recordings ({len(review.stale)})[/]", highlight=False)
        for stale in review.stale:
            console.print(
                Text.assemble(("  ", ""), (stale.path, "bold"), (f" (builder {stale.builder}): ", ""), stale.text)
            )
    rank = {c: i for i, c in enumerate(CATEGORIES)}
    entries = sorted(review.entries, key=lambda e: (KINDS.index(e.kind), e.group, rank[e.category], e.path))
    for kind, of_kind in groupby(entries, key=lambda e: e.kind):
        console.print(f"\n[bold underline]{PLURAL[kind]}[/]", highlight=False)
        for group, in_group in groupby(of_kind, key=lambda e: e.group):
            console.print(Text(f"  {group}", style="bold"))
            for entry in in_group:
                compared = entry.comparison
                line = Text.assemble(
                    ("    ", ""), (f"{entry.category:<13}", STYLES[entry.category]), " ", (entry.path, "")
                )
                if compared.note:
                    line.append(f"  ({compared.note})", style="dim")
                console.print(line)
                for change in compared.changes:
                    console.print(Text(f"        {change.text()}"))
                for exchange in compared.exchanges:
                    console.print(Text(f"        {exchange.status}: {exchange.request}"))
                    for change in exchange.changes:
                        console.print(Text(f"            {change.text()}"))
                if compared.omitted:
                    console.print(Text(f"        … {compared.omitted} more", style="dim"))
    for note in review.notes:
        console.print(Text(f"note: {note}", style="dim"))
