"""A blessed baseline: a small, reviewable, committed file that ``compare`` takes in place of a base run.

``evaljig-report bless RUN`` keeps, per case and metric, only what the gate reads: the result, the
score, how many runs and passes (``--evaljig-repeats``). No timestamps, run ids or paths: blessing the
same results again gives the same bytes (canonical JSON: sorted keys, 2-space indent, a trailing
newline), so a pull request's diff of ``evaljig-baseline.json`` shows exactly which results changed,
and ``evaljig review`` recognises the file by its ``kind`` marker. A single run is written as
``runs: 1`` and read back as a single run, so a deterministic suite is judged against its baseline
exactly as against the run it was blessed from.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaljig_common import StrictJSONError, loads_strict, write_text_atomic
from evaljig_report._compare import CompareError, RunOutcomes, StatusScore, load_outcomes

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

BASELINE_KIND = "evaljig-baseline"
BASELINE_VERSION = 1
DEFAULT_BASELINE = "evaljig-baseline.json"


def baseline_schema() -> dict[str, Any]:
    """The JSON Schema of a baseline file (a fresh copy)."""
    text = files("evaljig_report").joinpath("schemas/baseline.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def _validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

    return Draft202012Validator(baseline_schema())


def baseline_doc(outcomes: RunOutcomes) -> dict[str, Any]:
    """The baseline of a run: per case its status, per metric result, score, runs and passes; sorted."""
    cases = []
    for (session, suite, case_id), (status, metrics) in sorted(outcomes.cases.items()):
        blessed = {}
        for name, m in sorted(metrics.items()):
            passes, runs = m.counts
            blessed[name] = {"result": m.status, "score": m.score, "runs": runs, "passes": passes}
        cases.append({"session": session, "suite": suite, "case_id": case_id, "status": status, "metrics": blessed})
    return {"kind": BASELINE_KIND, "version": BASELINE_VERSION, "cases": cases}


def dumps_baseline(doc: dict[str, Any]) -> str:
    """Canonical text: sorted keys, 2-space indent, UTF-8 as is, one trailing newline."""
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_baseline(path: Path, outcomes: RunOutcomes) -> dict[str, Any]:
    """Write the baseline of ``outcomes`` to ``path`` atomically; returns the document."""
    doc = baseline_doc(outcomes)
    write_text_atomic(path, dumps_baseline(doc))
    return doc


def is_baseline(doc: object) -> bool:
    return isinstance(doc, dict) and doc.get("kind") == BASELINE_KIND


def load_baseline(path: Path) -> RunOutcomes:
    """A baseline file as the outcomes of a run; ``CompareError`` names the file, the field and why."""
    try:
        doc = loads_strict(path.read_bytes())
    except OSError as exc:
        raise CompareError(f"{path}: cannot read the baseline ({exc.strerror or exc})") from exc
    except StrictJSONError as exc:
        raise CompareError(f"{path}: not a baseline: not valid JSON ({exc})") from exc
    return outcomes_of_baseline(doc, str(path))


def load_base(path: Path) -> RunOutcomes:
    """BASE of ``compare``: a baseline file (recognised by its ``kind``), else a merged index or a run folder."""
    if path.is_file():
        try:
            head = loads_strict(path.read_bytes())
        except (OSError, StrictJSONError):
            head = None
        if is_baseline(head):
            return outcomes_of_baseline(head, str(path))
    return load_outcomes(path)


def outcomes_of_baseline(doc: object, source: str) -> RunOutcomes:
    """A parsed baseline as the outcomes of a run (checked against the baseline schema first)."""
    if not is_baseline(doc):
        raise CompareError(f"{source}: kind: not an evaljig baseline (expected kind {BASELINE_KIND!r})")
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "<root>"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise CompareError(f"{source}: {where}: {errors[0].message}{more}; fix: re-bless with evaljig-report bless")
    assert isinstance(doc, dict)
    cases: dict[tuple[str, str, str], tuple[str, dict[str, StatusScore]]] = {}
    for n, case in enumerate(doc["cases"]):
        key = (case["session"], case["suite"], case["case_id"])
        if key in cases:
            raise CompareError(f"{source}: cases/{n}: case {'::'.join(key)} is listed twice")
        metrics = {}
        for name, m in case["metrics"].items():
            if m["passes"] > m["runs"]:
                raise CompareError(f"{source}: cases/{n}/metrics/{name}: passes {m['passes']} > runs {m['runs']}")
            single = m["runs"] <= 1 and m["passes"] == int(m["result"] == "pass")
            runs, passes = (None, None) if single else (m["runs"], m["passes"])
            metrics[name] = StatusScore(m["result"], m["score"], runs, passes)
        cases[key] = (case["status"], metrics)
    if not cases:
        raise CompareError(f"{source}: no cases to compare (an empty baseline)")
    return RunOutcomes(cases, source)
