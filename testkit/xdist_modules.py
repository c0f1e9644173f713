"""xdist's ``--dist load`` with the cases of some test modules kept together on one worker.

Why: a module whose cases each pay a once-per-process cost (the LEV matrix's ``test_lev_api.py``
imports lighteval's pipeline into the worker, about 13 s of CPU) pays it once per worker that gets
one of them; plain ``load`` spreads them over every worker. ``xdist_group`` with ``--dist
loadgroup`` would say the same, but pytest-xdist 3.8 marks a group through a node id field pytest 9
no longer reads, so its groups are spread like any other case.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest


def load_with_modules_together(config: pytest.Config, log: Any, modules: Iterable[str]) -> Any:
    """A ``pytest_xdist_make_scheduler`` result: ``modules`` (file names) each one unit, every other case its own.

    The units go out largest first (xdist's ``loadscope`` order), so a kept-together module starts on
    one worker while the other workers take the single cases; None (xdist's own choice) unless
    ``--dist load`` was asked for.
    """
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    together = frozenset(modules)

    class ModulesTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if path.rsplit("/", 1)[-1] in together else nodeid

    return ModulesTogether(config, log)
