"""The example tool: a deterministic "code execution" tool over small tables.

It runs a named function on tables fetched with ``load_artifact`` and returns the result table (as
records), the numeric answer, a PNG bar chart and a CSV as base64 artifacts. Tables are lists of dicts
rather than pandas dataframes: pandas would pull numpy into the workspace for a handful of sums.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaljig_cases import FunctionCall, Records

from .png import bar_chart_png

Outcome = tuple[float, Records, list[float]]
"""answer, result table, the values to plot"""


def load_artifact(name: str) -> Records:
    """The production loader reads ``$EVALJIG_ARTIFACT_DIR/<name>.json``; eval suites patch it with mocks."""
    root = os.environ.get("EVALJIG_ARTIFACT_DIR")
    if not root:
        raise RuntimeError(f"cannot load artifact {name!r}: no artifact store configured")
    rows: Records = json.loads(Path(root, f"{name}.json").read_text(encoding="utf-8"))
    return rows


def column_mean(table: str, column: str) -> Outcome:
    values = [float(row[column]) for row in load_artifact(table)]
    mean = sum(values) / len(values)
    return mean, [{"statistic": "count", "value": len(values)}, {"statistic": "mean", "value": mean}], values


def group_sum(table: str, by: str, column: str) -> Outcome:
    totals: dict[str, float] = {}
    for row in load_artifact(table):
        totals[str(row[by])] = totals.get(str(row[by]), 0.0) + float(row[column])
    result = [{by: key, column: totals[key]} for key in sorted(totals)]
    return sum(totals.values()), result, [totals[key] for key in sorted(totals)]


def sum_of_squares(n: int) -> Outcome:
    squares = [{"i": i, "square": i * i} for i in range(1, n + 1)]
    return float(sum(r["square"] for r in squares)), squares, [float(r["square"]) for r in squares]


FUNCTIONS: dict[str, Callable[..., Outcome]] = {
    "column_mean": column_mean,
    "group_sum": group_sum,
    "sum_of_squares": sum_of_squares,
}


def execute(call: FunctionCall) -> dict[str, Any]:
    """Run ``call``; the output is JSON-able, with artifacts as ``{name, mime_type, base64}``."""
    function = FUNCTIONS.get(call.name)
    if function is None:
        raise ValueError(f"unknown function {call.name!r}; known: {', '.join(sorted(FUNCTIONS))}")
    answer, table, plotted = function(**call.args)
    return {
        "function": call.name,
        "answer": answer,
        "dataframes": {"result": table},
        "artifacts": [
            artifact("plot.png", "image/png", bar_chart_png(plotted)),
            artifact("result.csv", "text/csv", to_csv(table).encode()),
        ],
    }


def artifact(name: str, mime_type: str, data: bytes) -> dict[str, str]:
    return {"name": name, "mime_type": mime_type, "base64": base64.b64encode(data).decode("ascii")}


def to_csv(table: Records) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(table[0]) if table else [], lineterminator="\n")
    writer.writeheader()
    writer.writerows(table)
    return out.getvalue()
