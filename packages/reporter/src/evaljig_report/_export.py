"""``evaljig-report export --format eee``: a merged run in the Every Eval Ever schema (``eval.schema.json``).

Every Eval Ever (EvalEval Coalition) is a shared format for evaluation results, with converters from
lm-eval, Inspect and HELM; exporting to it puts evaljig's results next to theirs. One record per run:
per (session, suite) and metric a **pass rate** (cases that passed / cases that did not skip, with
its analytic standard error), the **mean score** when the metric gives scores, and for repeated
cases (``--evaljig-repeats K``) **pass^k** (every run passed) and **pass@k** (at least one did).
The schema is vendored unchanged (``schemas/eee``, MIT) and every export is validated against it
before it is written. The record's timestamp is the merged index's ``generated_at`` (which honours
``SOURCE_DATE_EPOCH``), so the same merged run gives the same bytes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaljig_common import EvaljigError
from evaljig_report._compare import CompareError, RunOutcomes, StatusScore, load_outcomes
from evaljig_report._layout import INDEX_FILE, MERGED_DIR
from evaljig_report._merge import generated_at

if TYPE_CHECKING:
    from jsonschema import Draft7Validator  # type: ignore[import-untyped,unused-ignore]

FORMATS = ("eee",)
RELATIONSHIPS = ("first_party", "third_party", "collaborative", "other")


class ExportError(EvaljigError):
    """A run that cannot be exported (unusable input, or a record the schema refuses)."""


def eee_schema() -> dict[str, Any]:
    """The vendored Every Eval Ever ``eval.schema.json`` (a fresh copy)."""
    loaded: dict[str, Any] = json.loads(files("evaljig_report").joinpath("schemas/eee/eval.schema.json").read_text())
    return loaded


@cache
def _validator() -> Draft7Validator:
    from jsonschema import Draft7Validator  # type: ignore[import-untyped,unused-ignore]

    return Draft7Validator(eee_schema())


def eee_errors(doc: object) -> list[str]:
    """Every violation of the Every Eval Ever schema, as ``path: message``; empty when valid."""
    return [
        f"{'/'.join(str(p) for p in err.absolute_path) or '<root>'}: {err.message}"
        for err in sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    ]


@dataclass(frozen=True)
class ModelInfo:
    """What evaljig cannot know about the model under test: the user says it (``--model-id`` …)."""

    id: str = "unknown"
    name: str | None = None
    organization: str = "unknown"
    relationship: str = "first_party"


def _library_version() -> str:
    try:
        return version("evaljig-report")
    except PackageNotFoundError:  # pragma: no cover - a source checkout without metadata
        return "unknown"


def _timestamp(path: Path) -> str:
    """Unix epoch seconds (the schema's format) of the merged index's ``generated_at``, else of now."""
    for candidate in (path, path / INDEX_FILE, path / MERGED_DIR / INDEX_FILE):
        if candidate.is_file():
            try:
                stamp = json.loads(candidate.read_text(encoding="utf-8")).get("generated_at")
                return str(int(datetime.fromisoformat(str(stamp)).timestamp()))
            except (OSError, ValueError, AttributeError):
                break
    return str(int(datetime.fromisoformat(generated_at()).timestamp()))


def _stats(outcomes: list[StatusScore]) -> dict[str, Any]:
    """Pass rate and mean score over cases that did not skip, pass^k and pass@k over repeated ones."""
    ran = [o for o in outcomes if o.counts[1] > 0]
    passed = sum(o.status == "pass" for o in ran)
    scores = [o.score for o in ran if o.score is not None]  # a skipped case's score judges nothing
    repeated = [o for o in ran if o.runs is not None]
    return {
        "ran": len(ran),
        "passed": passed,
        "skipped": len(outcomes) - len(ran),
        "mean": math.fsum(scores) / len(scores) if scores else None,
        "scored": len(scores),
        "repeated": len(repeated),
        "every": sum(o.passes == o.runs for o in repeated),
        "some": sum((o.passes or 0) > 0 for o in repeated),
        "k": max((o.runs or 0 for o in repeated), default=0),
    }


def _proportion(
    key: str, name: str, metric: str, metric_id: str, value: int, n: int, details: dict[str, str], k: int | None = None
) -> dict[str, Any]:
    p = value / n
    config: dict[str, Any] = {
        "evaluation_description": f"evaljig metric {metric!r}: {name}",
        "metric_id": metric_id,
        "metric_name": name,
        "metric_kind": "pass_rate",
        "metric_unit": "proportion",
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": 0,
        "max_score": 1,
    }
    if k is not None:
        config["metric_parameters"] = {"k": k}
    return {
        "key": key,
        "metric_config": config,
        "score_details": {
            "score": p,
            "details": details,
            "uncertainty": {
                "standard_error": {"value": math.sqrt(p * (1 - p) / n), "method": "analytic"},
                "num_samples": n,
            },
        },
    }


def _results(session: str, suite: str, metric: str, st: dict[str, Any]) -> list[dict[str, Any]]:
    base = f"{session}/{suite}/{metric}"
    details = {"cases": str(st["ran"] + st["skipped"]), "passed": str(st["passed"]), "skipped": str(st["skipped"])}
    results = []
    if st["ran"]:
        results.append(
            _proportion(f"{base}/pass_rate", "pass rate", metric, "pass_rate", st["passed"], st["ran"], details)
        )
    if st["repeated"]:
        k = st["k"]
        results.append(
            _proportion(f"{base}/pass_hat_k", f"pass^{k}", metric, "pass_hat_k", st["every"], st["repeated"], {}, k)
        )
        results.append(
            _proportion(f"{base}/pass_at_k", f"pass@{k}", metric, "pass_at_k", st["some"], st["repeated"], {}, k)
        )
    if st["mean"] is not None:
        results.append(
            {
                "key": f"{base}/mean_score",
                "metric_config": {
                    "evaluation_description": f"evaljig metric {metric!r}: mean score over its cases",
                    "metric_id": f"evaljig.{metric}.mean_score",
                    "metric_name": f"{metric} (mean score)",
                    "metric_kind": "score",
                    "lower_is_better": False,
                    "score_type": "continuous",
                    "min_score": None,
                    "max_score": None,
                },
                "score_details": {"score": st["mean"], "uncertainty": {"num_samples": st["scored"]}},
            }
        )
    return results


def eee_record(outcomes: RunOutcomes, *, timestamp: str, model: ModelInfo) -> dict[str, Any]:
    """The Every Eval Ever record of a run: one evaluation per (session, suite), results per metric."""
    groups: dict[tuple[str, str, str], list[StatusScore]] = {}
    for (session, suite, _), (_, metrics) in sorted(outcomes.cases.items()):
        for name, outcome in metrics.items():
            groups.setdefault((session, suite, name), []).append(outcome)
    results = []
    for (session, suite, metric), found in sorted(groups.items()):
        for result in _results(session, suite, metric, _stats(found)):
            results.append(
                {
                    "evaluation_result_id": result.pop("key"),
                    "evaluation_name": f"{suite} ({session})" if session else suite,
                    "source_data": {
                        "dataset_name": suite,
                        "source_type": "other",
                        "additional_details": {"session": session, "metric": metric, "producer": "evaljig"},
                    },
                    **result,
                }
            )
    return {
        "schema_version": str(eee_schema()["version"]),
        "evaluation_id": f"evaljig/{model.id}/{timestamp}",
        "retrieved_timestamp": timestamp,
        "source_metadata": {
            "source_name": "evaljig",
            "source_type": "evaluation_run",
            "source_organization_name": model.organization,
            "evaluator_relationship": model.relationship,
        },
        "eval_library": {"name": "evaljig", "version": _library_version()},
        "model_info": {
            "name": model.name or model.id,
            "id": model.id,
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        },
        "evaluation_results": results,
    }


def export_eee(run: Path, model: ModelInfo) -> str:
    """The run (merged index, merged/ or run folder) as Every Eval Ever JSON text, validated."""
    try:
        outcomes = load_outcomes(run)
    except CompareError as exc:
        raise ExportError(str(exc)) from exc
    doc = eee_record(outcomes, timestamp=_timestamp(run), model=model)
    if errors := eee_errors(doc):
        raise ExportError(f"{run}: the export does not match eval.schema.json: {errors[0]}")
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
