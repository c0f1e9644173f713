"""What both lighteval runners return, and how lighteval's output is read."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

#: lighteval 0.13, models/endpoints/litellm_model.py: logged once per request that ended empty.
BUDGET_SPENT = re.compile(r"API call failed after (\d+) attempts, returning empty response")
#: ... and once per failed attempt, with the error text (it may span lines: a cassette miss does).
ATTEMPT_FAILED = re.compile(r"Error in API call: ([\s\S]*?), waiting [0-9.]+ seconds before retry (\d+)/(\d+)")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class LightEvalRun:
    """One lighteval run through either path."""

    path: Literal["cli", "python"]
    run_dir: Path
    scores: dict[str, dict[str, float]]
    """Task -> metric -> value, as in lighteval's results JSON (``all`` included)."""
    stdout_table: str
    """The Markdown results table lighteval printed (banners and other noise removed)."""
    files: list[Path]
    """Everything lighteval wrote under ``run_dir/out``, relative to ``run_dir``, sorted."""
    empty_requests: int
    """Requests that ended empty after lighteval's retry budget."""
    attempts_per_request: int | None
    last_error: str | None
    returncode: int | None = None
    messages: list[str] = field(default_factory=list)
    """lighteval's warnings and errors about API calls, in order."""
    answers: int | None = None
    """Answers lighteval recorded in its details (``None``: no details, or no pyarrow to read them)."""
    empty_answers: int | None = None
    """Of those, the answers that were empty: the ones after a spent retry budget, and the ones that
    came back empty with a 200 (lighteval's second, uncached call included), all scored 0."""
    reasoning_only: int | None = None
    """Of the empty answers, those that carried reasoning (a reasoning model with nothing in ``content``)."""

    @property
    def empty_after_success(self) -> int:
        """Empty answers that no spent retry budget explains: the model answered 200 with nothing."""
        return max(0, (self.empty_answers or 0) - self.empty_requests)


def results_table(stdout: str) -> str:
    """The trailing Markdown table lighteval prints; litellm may print banners around it."""
    lines = [_ANSI.sub("", line).rstrip() for line in stdout.splitlines()]
    table = [line for line in lines if line.startswith("|")]
    return "\n".join(table) + "\n" if table else ""


def read_scores(out_dir: Path) -> dict[str, dict[str, float]]:
    """Scores from the newest ``results_*.json`` lighteval wrote under ``out_dir``."""
    found = sorted(out_dir.glob("results/**/results_*.json"))
    if not found:
        return {}
    data: dict[str, Any] = json.loads(found[-1].read_text(encoding="utf-8"))
    return {
        task: {name: float(value) for name, value in metrics.items() if isinstance(value, (int, float))}
        for task, metrics in sorted(data.get("results", {}).items())
    }


def api_messages(text: str) -> list[str]:
    """lighteval's API-call warnings/errors found in log text, in order."""
    return [m.group(0) for m in re.finditer(f"{ATTEMPT_FAILED.pattern}|{BUDGET_SPENT.pattern}", text)]


def budget_summary(messages: list[str]) -> tuple[int, int | None, str | None]:
    """(requests that ended empty, attempts per request, last error) from lighteval's messages."""
    spent = [BUDGET_SPENT.search(m) for m in messages]
    attempts = [int(m.group(1)) for m in spent if m]
    errors = [m.group(1) for m in (ATTEMPT_FAILED.search(x) for x in messages) if m]
    return len(attempts), (attempts[-1] if attempts else None), (errors[-1] if errors else None)


def written_files(run_dir: Path) -> list[Path]:
    out = run_dir / "out"
    return sorted(p.relative_to(run_dir) for p in out.rglob("*") if p.is_file()) if out.exists() else []
