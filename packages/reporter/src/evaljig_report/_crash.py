"""Cases that never finished: a worker that died mid-case, a session that was killed.

Each worker writes ``collected.json`` (every case it collected, with the test items of each)
before it runs a test. The xdist controller, which outlives its workers, records a crashed
item as an ``error`` case under the ``controller`` folder; a merge reconciles what was
collected with what was recorded, so a case is never silently missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest

from evaljig_common import write_bytes_atomic
from evaljig_report._casefile import dumps
from evaljig_report._layout import COLLECTED_FILE, Layout
from evaljig_report._recorder import split_nodeid
from evaljig_report._schema import SCHEMA_VERSION

#: The worker folder the controller writes crashed cases into.
CONTROLLER_WORKER = "controller"
#: The parameter of a tool-eval test that holds its case (``evaljig_cases.ToolEval`` uses it).
CASE_PARAM = "evaljig_case"

#: A collected case: (suite, case_id, kind).
CollectedKey = tuple[str, str, str]


def case_key(item: pytest.Item, all_tests: bool) -> CollectedKey | None:
    """The case an item belongs to: a tool-eval item by its ``evaljig_case`` parameter, else by its node id."""
    callspec = getattr(item, "callspec", None)
    params: dict[str, Any] = getattr(callspec, "params", {}) or {}
    if CASE_PARAM in params:
        case = params[CASE_PARAM]
        parent = item.getparent(pytest.Class) or item.getparent(pytest.Module)
        suite = parent.nodeid if parent is not None else split_nodeid(item.nodeid)[0]
        return suite, str(getattr(case, "id", case)), "eval"
    if all_tests:
        suite, name = split_nodeid(item.nodeid)
        return suite, name, "pytest"
    return None


def collected_cases(items: Iterable[pytest.Item], all_tests: bool) -> dict[CollectedKey, list[str]]:
    """Every case of ``items`` and the node ids of its items (empty when no item is a case)."""
    cases: dict[CollectedKey, list[str]] = {}
    for item in items:
        key = case_key(item, all_tests)
        if key is not None:
            cases.setdefault(key, []).append(item.nodeid)
    return cases


def write_collected(layout: Layout, cases: Mapping[CollectedKey, list[str]]) -> Path:
    """``<worker>/collected.json``: the cases this process collected (``collected_cases``)."""
    doc = {
        "schema_version": SCHEMA_VERSION,
        "kind": "collected",
        "run": layout.run,
        "session": layout.session,
        "worker": layout.worker,
        "cases": [
            {"suite": s, "case_id": c, "kind": k, "nodeids": nodeids} for (s, c, k), nodeids in sorted(cases.items())
        ],
    }
    path = layout.worker_dir / COLLECTED_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(path, dumps(doc))
    return path


class CollectedCases:
    """Node id -> case, read lazily from the workers' ``collected.json`` (the controller collects nothing)."""

    def __init__(self, session_dir: Path) -> None:
        self.session_dir = session_dir
        self._by_nodeid: dict[str, CollectedKey] = {}
        self._read: set[str] = set()

    def load(self, worker: str) -> None:
        if worker in self._read:
            return
        path = self.session_dir / worker / COLLECTED_FILE
        try:
            doc = orjson.loads(path.read_bytes())
            rows = doc["cases"] if isinstance(doc, dict) else []
            for row in rows:
                key = (str(row["suite"]), str(row["case_id"]), str(row.get("kind", "eval")))
                for nodeid in row["nodeids"]:
                    self._by_nodeid[str(nodeid)] = key
        except (OSError, ValueError, KeyError, TypeError):
            return  # not written yet (or unusable): the node id alone still names the test
        self._read.add(worker)

    def get(self, nodeid: str, worker: str | None = None) -> CollectedKey | None:
        if nodeid not in self._by_nodeid and worker is not None:
            self.load(worker)
        return self._by_nodeid.get(nodeid)

    def of(self, nodeid: str, worker: str) -> CollectedKey:
        """The case of ``nodeid``; an unknown item is a case of kind ``pytest`` named after it."""
        key = self.get(nodeid, worker)
        if key is None:
            suite, name = split_nodeid(nodeid)
            key = (suite, name, "pytest")
        return key
