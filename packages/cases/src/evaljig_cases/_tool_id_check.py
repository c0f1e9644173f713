"""pytest plugin (``pytest11`` entry point): a case whose ``tool_id`` no test class runs is a collection error.

It also registers ``--evaljig-repeats`` (see ``_repeats``).

A ``ToolEval`` class with a ``tool_id`` keeps only that tool's cases, so a typo in a case file
(``tool_id: wether``) would silently drop the case. Every class registers itself while pytest
generates its tests; once the whole session is collected, a case no class runs is reported as
an error collecting the module of the class that was given it, naming the case file and the
tool ids that do exist. The check sees the classes collected in this session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from evaljig_cases._repeats import pytest_addoption, pytest_configure

if TYPE_CHECKING:  # this plugin loads into every pytest session: the pydantic case model only when used
    from evaljig_cases._eval_case import EvalCase

__all__ = [
    "ToolClass",
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "register",
    "unmatched",
]


@dataclass(frozen=True)
class ToolClass:
    """One collected ``ToolEval`` class: where it is, which tool it runs (None: all) and the cases it was given."""

    module_nodeid: str
    tool_id: str | None
    cases: tuple[EvalCase, ...]


TOOL_CLASSES = pytest.StashKey[dict[str, ToolClass]]()


def register(config: pytest.Config, class_nodeid: str, tool_class: ToolClass) -> None:
    """Called by ``ToolEval.pytest_generate_tests`` for every collected class."""
    config.stash.setdefault(TOOL_CLASSES, {})[class_nodeid] = tool_class


def unmatched(classes: list[ToolClass]) -> list[tuple[str, str]]:
    """(module node id, message) for every case whose tool_id no class runs."""
    known = sorted({c.tool_id for c in classes if c.tool_id is not None})
    taken_by_all = {id(case) for c in classes if c.tool_id is None for case in c.cases}
    found: dict[tuple[str, str], tuple[str, str]] = {}
    for tool_class in classes:
        for case in tool_class.cases:
            if case.tool_id in known or id(case) in taken_by_all:
                continue
            where = case.source or tool_class.module_nodeid
            message = (
                f"{where}: case {case.id!r} has tool_id {case.tool_id!r}, which no test class runs "
                f"(known tool ids: {', '.join(known) or 'none'})"
            )
            found.setdefault((where, case.id), (tool_class.module_nodeid, message))
    return sorted(found.values())


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config) -> None:
    """Before ``-k``/``-m`` deselect anything: report unmatched cases as collection errors."""
    classes = list(config.stash.get(TOOL_CLASSES, {}).values())
    by_module: dict[str, list[str]] = {}
    for module_nodeid, message in unmatched(classes):
        by_module.setdefault(module_nodeid, []).append(message)
    for module_nodeid, messages in sorted(by_module.items()):
        report = pytest.CollectReport(module_nodeid, "failed", "\n".join(messages), [])
        config.hook.pytest_collectreport(report=report)
