"""Deterministic fixture regeneration: named builders write ``fixtures/``; ``--check`` fails on drift.

A build script lists the builders (evaljig's own: ``scripts/testing/build_lighteval_fixture.py``).
"""

from evaljig_fixtures._regen.builder import (
    REQUIREMENTS,
    BuildContext,
    Builder,
    BuildFunction,
    Upstream,
    registry_problems,
    select,
    unmet_requirements,
    write_output,
)
from evaljig_fixtures._regen.run import RegenOptions, run_regen

__all__ = [
    "REQUIREMENTS",
    "BuildContext",
    "BuildFunction",
    "Builder",
    "RegenOptions",
    "Upstream",
    "registry_problems",
    "run_regen",
    "select",
    "unmet_requirements",
    "write_output",
]
