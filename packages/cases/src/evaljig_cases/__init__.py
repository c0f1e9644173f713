"""evaljig-cases: eval-case models and loading, cases defined in code, the tool-eval base class.

Installing the package registers its pytest plugin (``pytest11`` entry point ``evaljig_cases``), which
reports a case whose ``tool_id`` no test class runs. That plugin loads into every pytest session, so
each public name is imported on first use (``evaljig_common.lazy_exports``): the pydantic-evals bridge
(``to_pydantic_evals``, ``MetricEvaluator``; pydantic_evals takes seconds to import) and the case
models alike. Modules starting with ``_`` are internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaljig_common import lazy_exports

if TYPE_CHECKING:  # for type checkers; at run time lazy_exports imports each name from the module named here
    from evaljig_cases._case_record import CaseRecord
    from evaljig_cases._code_cases import CodeCase, ToolCase, collect_cases, eval_cases
    from evaljig_cases._errors import CaseLoadError, DuplicateCaseError
    from evaljig_cases._eval_case import EvalCase, FunctionCall, Records
    from evaljig_cases._evals_bridge import MetricEvaluator, to_pydantic_evals
    from evaljig_cases._loading import load_case_file, load_cases
    from evaljig_cases._metrics import Inference, Metric, MetricResult, MetricStatus
    from evaljig_cases._scoring import evaluate_and_record
    from evaljig_cases._tool_eval import ToolEval
    from evaljig_cases._tool_run import ToolRun, run_tool
    from evaljig_common import RECORD_KEY

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

__getattr__ = lazy_exports(__name__, __file__, __all__)
