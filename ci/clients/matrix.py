"""The client x feature table of ``nox -s clients``: outcomes per cell, merged across the per-client venvs.

Stdlib only: the conftest of ci/clients records each venv's outcomes with it, and the noxfile (which
runs in nox's own venv) loads it from its file to print the merged table once every venv has run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

#: The rows and columns of the table, in this order (a column no test fills is left out).
CLIENTS = ("openai", "openai-2", "litellm", "pydantic-ai", "langchain-openai", "instructor", "lm-eval", "inspect-ai")
FEATURES = ("chat", "stream", "structured", "nested", "tools", "responses", "embeddings", "loglikelihood", "eval")
#: The gateway's failure behaviours (issue 31), a second table; each cell also records what the client saw.
FAILURES = (
    "reasoning",
    "think-empty",
    "length",
    "cut",
    "drop",
    "garble",
    "context",
    "tpm",
    "bad-tool-args",
    "unknown-tool",
)
#: A cell lists its outcomes worst first.
RANK = {"FAIL": 3, "XFAIL": 2, "SKIP": 1, "PASS": 0}

Outcomes = Mapping[tuple[str, str], list[str]]
#: (client, failure) -> what the client raised or returned, in one line.
Seen = Mapping[tuple[str, str], str]


def cell_text(results: list[str]) -> str:
    """One cell: ``-`` when no test fills it, the outcome when all agree, else each outcome with its count."""
    if not results:
        return "-"
    counts = {o: results.count(o) for o in sorted(set(results), key=RANK.__getitem__, reverse=True)}
    if len(counts) == 1:
        outcome, n = next(iter(counts.items()))
        return outcome if n == 1 else f"{outcome}({n})"
    return " ".join(f"{outcome}({n})" for outcome, n in counts.items())


def matrix_lines(outcomes: Outcomes, columns: tuple[str, ...] = FEATURES) -> list[str]:
    """The table as text lines: the ``columns`` some test filled (the features, or the failures)."""
    features = [f for f in columns if any(f == feature for _, feature in outcomes)]
    if not features:
        return []
    texts = {(c, f): cell_text(list(outcomes.get((c, f), []))) for c in CLIENTS for f in features}
    width = max(len(c) for c in CLIENTS)
    cols = [max(len(f), *(len(texts[c, f]) for c in CLIENTS)) for f in features]
    lines = [" ".join([f"{'client':<{width}}", *(f"{f:<{w}}" for f, w in zip(features, cols, strict=True))])]
    for name in CLIENTS:
        cells = (f"{texts[name, f]:<{w}}" for f, w in zip(features, cols, strict=True))
        lines.append(" ".join([f"{name:<{width}}", *cells]).rstrip())
    return lines


def seen_lines(seen: Seen) -> list[str]:
    """What each client raised or returned per failure, client by client, in table order."""
    order = {(c, f): (i, j) for i, c in enumerate(CLIENTS) for j, f in enumerate(FAILURES)}
    cells = sorted((key for key in seen if key in order), key=order.__getitem__)
    width = max((len(f"{c} x {f}") for c, f in cells), default=0)
    return [f"{f'{c} x {f}':<{width}}  {seen[c, f]}" for c, f in cells]


def write_outcomes(path: Path, outcomes: Outcomes, seen: Seen | None = None) -> None:
    """One venv's outcomes and observations as JSON, written atomically.

    ``{"cells": [[client, feature, [outcomes]], ...], "seen": [[client, failure, text], ...]}``.
    """
    rows = sorted([client, feature, list(results)] for (client, feature), results in outcomes.items())
    observed = sorted([client, failure, text] for (client, failure), text in (seen or {}).items())
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps({"cells": rows, "seen": observed}, indent=1) + "\n")
    partial.replace(path)


def read_outcomes(paths: Iterable[Path]) -> dict[tuple[str, str], list[str]]:
    """Every venv's outcomes, merged cell by cell."""
    merged: dict[tuple[str, str], list[str]] = {}
    for path in paths:
        for client, feature, results in json.loads(path.read_text())["cells"]:
            merged.setdefault((client, feature), []).extend(results)
    return merged


def read_seen(paths: Iterable[Path]) -> dict[tuple[str, str], str]:
    """Every venv's observations (a cell is filled by one venv only)."""
    return {(client, failure): text for path in paths for client, failure, text in json.loads(path.read_text())["seen"]}
