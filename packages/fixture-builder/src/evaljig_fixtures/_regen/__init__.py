"""Deterministic fixture regeneration: named builders write ``fixtures/``; ``--check`` fails on drift.

A build script lists the builders (evaljig's own: ``scripts/testing/build_lighteval_fixture.py``).
"""

from evaljig_fixtures._regen.builder import Builder, BuildFunction, write_output
from evaljig_fixtures._regen.context import REQUIREMENTS, BuildContext, Upstream, unmet_requirements
from evaljig_fixtures._regen.rebuild import RegenOptions, run_regen
from evaljig_fixtures._regen.selection import registry_problems, select

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
