"""Deterministic fixture regeneration: named builders write ``fixtures/``; ``--check`` fails on drift.

The builders themselves are listed in ``evaljig_fixtures._builders.registry.BUILDERS``.
"""

from evaljig_fixtures._regen.builder import Builder, BuildFunction, write_output
from evaljig_fixtures._regen.context import REQUIREMENTS, BuildContext, unmet_requirements
from evaljig_fixtures._regen.rebuild import RegenOptions, run_regen
from evaljig_fixtures._regen.selection import registry_problems, select

__all__ = [
    "REQUIREMENTS",
    "BuildContext",
    "BuildFunction",
    "Builder",
    "RegenOptions",
    "registry_problems",
    "run_regen",
    "select",
    "unmet_requirements",
    "write_output",
]
