"""Sample inputs for the reporter tests: contract records as the cases package writes them, small files.

``report_suite`` lays out test files under pytester that report into ``reports/r1/tests``.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# 1x1 transparent PNG
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
CSV = b"step,value\n1,0.5\n2,0.75\n"


def make_record(
    case_id: str,
    metric: str = "exact",
    status: str = "pass",
    *,
    suite: str = "tests/test_tools.py::TestCodeTool",
    score: float | None = None,
    reason: str = "",
    artifacts: list[dict[str, str]] | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    """One ``evaljig.case`` record as the cases package produces it."""
    inference: dict[str, Any] = {"output": f"result of {case_id}"}
    if artifacts is not None:
        inference["artifacts"] = artifacts
    return {
        "suite": suite,
        "case_id": case_id,
        "case": {
            "case_id": case_id,
            "description": f"the {case_id} case",
            "tool_id": "code",
            "function_call": {"name": "run_code", "args": {"code": "print(1 + 1)"}},
            "expectations": {"output": "2"},
        },
        "inference": inference,
        "metric": {
            "name": metric,
            "status": status,
            "score": (1.0 if status == "pass" else 0.0) if score is None else score,
            "reason": reason or f"{metric} {status}",
        },
        "error": error,
    }


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


Populate = Callable[..., Path]


def report_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, **files: str) -> pytest.Pytester:
    """Test files under pytester, reporting into ``reports/r1/tests``."""
    pytester.makepyfile(**files)
    monkeypatch.setenv("EVALJIG_RUN", "r1")
    monkeypatch.setenv("EVALJIG_SESSION", "tests")
    return pytester
