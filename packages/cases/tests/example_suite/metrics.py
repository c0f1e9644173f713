"""The example suite's three metrics: right function, right answer, artifacts present and well-formed."""

from __future__ import annotations

import base64
import binascii
import math

from evaljig_cases import EvalCase, Inference, Metric, MetricResult

from .png import PNG_SIGNATURE

DEFAULT_ARTIFACTS = ("plot.png", "result.csv")


class FunctionNameMatch(Metric):
    """The tool ran the function the case asked for (or the one the case expects it to choose)."""

    def evaluate(self, case: EvalCase, inference: Inference) -> MetricResult:
        expected = case.expectations.get("function", case.function_call.name)
        actual = inference.get("function")
        if actual == expected:
            return self.passed(f"ran {actual}")
        return self.failed(f"expected {expected!r}, the tool ran {actual!r}")


class AnswerWithinTolerance(Metric):
    """The numeric answer is within ``tolerance`` (absolute) of the expected one; async to show it works."""

    def __init__(self, tolerance: float = 1e-9) -> None:
        self.tolerance = tolerance

    async def evaluate_async(self, case: EvalCase, inference: Inference) -> MetricResult:
        if "answer" not in case.expectations:
            return self.skipped("the case expects no numeric answer")
        expected = float(case.expectations["answer"])
        tolerance = float(case.expectations.get("tolerance", self.tolerance))
        actual = inference.get("answer")
        if not isinstance(actual, (int, float)) or not math.isfinite(actual):
            return self.failed(f"no finite numeric answer (got {actual!r})")
        error = abs(actual - expected)
        if error <= tolerance:
            return self.passed(f"{actual:g} is within {tolerance:g} of {expected:g}")
        return self.failed(f"{actual:g} is {error:g} away from {expected:g} (tolerance {tolerance:g})")


class ArtifactPresence(Metric):
    """Every expected artifact is there, decodes, and looks like its mime type says."""

    def evaluate(self, case: EvalCase, inference: Inference) -> MetricResult:
        expected = list(case.expectations.get("artifacts", DEFAULT_ARTIFACTS))
        found = {a["name"]: a for a in inference.get("artifacts", [])}
        problems = [problem for name in expected if (problem := _check(name, found.get(name)))]
        score = (len(expected) - len(problems)) / len(expected) if expected else 1.0
        if problems:
            return self.failed("; ".join(problems), score=score)
        return self.passed(f"found {', '.join(expected)}", score=score)


def _check(name: str, artifact: dict[str, str] | None) -> str | None:
    if artifact is None:
        return f"{name} missing"
    try:
        data = base64.b64decode(artifact["base64"], validate=True)
    except (binascii.Error, KeyError):
        return f"{name} is not valid base64"
    if artifact.get("mime_type") == "image/png" and not data.startswith(PNG_SIGNATURE):
        return f"{name} is not a PNG"
    if artifact.get("mime_type") == "text/csv" and b"\n" not in data:
        return f"{name} has no CSV header line"
    return None
