"""xdist scheduling by case: all items of one case on one worker, different cases on any worker.

Opt-in (``--evaljig-schedule-by-case`` or the ini option ``evaljig_schedule_by_case``): a project
that installs the reporter without asking keeps xdist's own scheduler.

A tool-eval case is one tool run shared by several metric items (a class-scoped fixture). With
xdist's ``--dist load`` those items land on different workers, each running the tool again, so
a case could show one worker's output and another's scores. This scheduler makes each case one
work unit (xdist's ``loadscope`` machinery with the case as the scope); the cases of a node id
come from the workers' ``collected.json``. ``--dist loadgroup`` cannot do it: xdist 3.8 marks a
group by renaming ``item._nodeid``, which pytest 9 no longer reads.

A case whose run killed its worker is not run again on the next worker (it would kill that
one too): the controller records it as an error instead.
"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

from evaljig_report._crash import CollectedCases


class CaseScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist ships no type information
    """``loadscope`` where a scope is one case; items that belong to no case are scheduled one by one."""

    def __init__(self, config: Any, log: Any, cases: CollectedCases) -> None:
        super().__init__(config, log)
        self.cases = cases

    def add_node_collection(self, node: Any, collection: Any) -> None:
        self.cases.load(str(node.gateway.id))
        super().add_node_collection(node, collection)

    def _split_scope(self, nodeid: str) -> str:
        key = self.cases.get(nodeid)
        return nodeid if key is None else "\0".join(key)

    def _reschedule(self, node: Any) -> None:
        if node in self.registered_collections:  # a restarted worker gets work once it has collected
            super()._reschedule(node)

    def remove_node(self, node: Any) -> str | None:
        """``LoadScopeScheduling.remove_node`` without handing the crashed case to another worker."""
        workload: dict[str, dict[str, bool]] = self.assigned_work.pop(node)
        pending = [(scope, nodeid) for scope, unit in workload.items() for nodeid, done in unit.items() if not done]
        if not pending:
            return None
        crashed_scope, crashitem = pending[0]
        self.workqueue.update(
            (scope, unit) for scope, unit in workload.items() if scope != crashed_scope and not all(unit.values())
        )
        for other in self.assigned_work:
            self._reschedule(other)
        return crashitem
