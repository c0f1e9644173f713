"""evaljig-cases: eval-case models and loading, cases defined in code, the tool-eval base class.

The pydantic-evals bridge (``to_pydantic_evals``, ``MetricEvaluator``) is imported
lazily: pydantic_evals takes seconds to import and a pytest run of tool evals never needs it.
Installing the package registers its pytest plugin (``pytest11`` entry point ``evaljig_cases``), which
reports a case whose ``tool_id`` no test class runs. Modules starting with ``_`` are internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evaljig_cases._case_record import CaseRecord
from evaljig_cases._code_cases import CodeCase, ToolCase, collect_cases, eval_cases
from evaljig_cases._errors import CaseLoadError, DuplicateCaseError
from evaljig_cases._eval_case import EvalCase, FunctionCall, Records
from evaljig_cases._loading import load_case_file, load_cases
from evaljig_cases._metrics import Inference, Metric, MetricResult, MetricStatus
from evaljig_cases._scoring import evaluate_and_record
from evaljig_cases._tool_eval import ToolEval
from evaljig_cases._tool_run import ToolRun, run_tool
from evaljig_common import RECORD_KEY

if TYPE_CHECKING:
    from evaljig_cases._evals_bridge import MetricEvaluator, to_pydantic_evals

__all__ = [
    "RECORD_KEY",
    "CaseLoadError",
    "CaseRecord",
    "CodeCase",
    "DuplicateCaseError",
    "EvalCase",
    "FunctionCall",
    "Inference",
    "Metric",
    "MetricEvaluator",
    "MetricResult",
    "MetricStatus",
    "Records",
    "ToolCase",
    "ToolEval",
    "ToolRun",
    "collect_cases",
    "eval_cases",
    "evaluate_and_record",
    "load_case_file",
    "load_cases",
    "run_tool",
    "to_pydantic_evals",
]

_LAZY = {"MetricEvaluator", "to_pydantic_evals"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from evaljig_cases import _evals_bridge

        return getattr(_evals_bridge, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
