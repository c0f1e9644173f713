"""Is a drop in passes between two runs noise? Fisher's exact test, one-sided, computed exactly.

A noisy tool (an LLM behind it) fails now and then: one flip pass -> fail between two single runs
says nothing. Under ``--evaljig-repeats K`` each side has runs and passes per metric, a 2x2 table
(passes and failures of base and new); the one-sided p-value is the chance, with the total number
of failures fixed, that the new run gets at least as many of them as it did if both came from the
same pass rate (the hypergeometric tail). Exact integer arithmetic (``math.comb``, ``Fraction``):
no scipy, the same p on every machine.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb


def _check(passes: int, runs: int) -> None:
    if not 0 <= passes <= runs:
        raise ValueError(f"passes {passes} must be between 0 and runs {runs}")


def fisher_worse(base_passes: int, base_runs: int, new_passes: int, new_runs: int) -> float:
    """One-sided Fisher p-value that the new pass rate is lower than the base's (1.0 when a side has no runs)."""
    _check(base_passes, base_runs)
    _check(new_passes, new_runs)
    if base_runs == 0 or new_runs == 0:
        return 1.0
    total = base_runs + new_runs
    failures = (base_runs - base_passes) + (new_runs - new_passes)
    new_failures = new_runs - new_passes
    tail = sum(
        comb(failures, x) * comb(total - failures, new_runs - x)
        for x in range(new_failures, min(failures, new_runs) + 1)
    )
    return float(Fraction(tail, comb(total, new_runs)))


def fisher_better(base_passes: int, base_runs: int, new_passes: int, new_runs: int) -> float:
    """One-sided Fisher p-value that the new pass rate is higher than the base's."""
    return fisher_worse(base_runs - base_passes, base_runs, new_runs - new_passes, new_runs)
