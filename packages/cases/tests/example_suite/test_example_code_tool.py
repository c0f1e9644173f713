"""The example suite as pytest items: one per (case, metric), the tool run once per case."""

from __future__ import annotations

from .suite import CodeToolEval


class TestCodeTool(CodeToolEval):
    """Inherits cases, metrics, patches and ``test_metric``; nothing else is needed."""
