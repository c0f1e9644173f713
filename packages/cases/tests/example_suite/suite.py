"""The example tool-eval suite, defined once and subclassed by the test module (so it is collected once)."""
# cases are declared as class attributes, pytest-class style

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaljig_cases import EvalCase, Records, ToolEval, eval_cases, load_cases

from . import code_tool
from .code_cases import CodeToolCase
from .metrics import AnswerWithinTolerance, ArtifactPresence, FunctionNameMatch

CASES_DIR = Path(__file__).parent / "cases"
METRICS = (FunctionNameMatch(), AnswerWithinTolerance(), ArtifactPresence())


def mock_loader(case: EvalCase) -> Callable[[str], Records]:
    """An artifact loader that serves the case's mock dataframes (copies, so the tool cannot alter the case)."""

    def load_artifact(name: str) -> Records:
        if name not in case.artifact_mocks:
            raise LookupError(f"case {case.id!r} has no artifact mock {name!r}")
        return copy.deepcopy(case.artifact_mocks[name])

    return load_artifact


class CodeToolEval(ToolEval):
    """Folder cases and code-defined cases against the code tool, judged by three metrics."""

    tool_id = "code"
    cases = (*load_cases(CASES_DIR), *eval_cases(CodeToolCase))
    metrics = METRICS
    patches = {f"{code_tool.__name__}.load_artifact": mock_loader}

    def run_tool(self, case: EvalCase) -> dict[str, Any]:
        return code_tool.execute(case.function_call)
