"""evaljig-report: per-case eval reports from pytest, merged across workers, sessions and CI shards.

Installing the package registers the pytest plugin (``pytest11`` entry point ``evaljig_report``)
and the ``evaljig-report`` command (also ``python -m evaljig_report``). What tests and scripts
use: the ``item.user_properties`` keys the plugin reads, the ``case.json`` schema, merge and
compare. Everything else is internal (``_``-prefixed modules) and may change. The plugin loads into
every pytest session, so each public name is imported on first use (``evaljig_common.lazy_exports``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaljig_common import lazy_exports

if TYPE_CHECKING:  # for type checkers; at run time lazy_exports imports each name from the module named here
    from evaljig_common import RECORD_KEY
    from evaljig_report._attachments import ATTACHMENT_KEY
    from evaljig_report._baseline import BASELINE_KIND, baseline_schema, load_baseline, write_baseline
    from evaljig_report._collect import MergeResult, collect
    from evaljig_report._compare import Change, CompareError, RunOutcomes, diff, load_outcomes
    from evaljig_report._merge import merge
    from evaljig_report._publish import MergeError
    from evaljig_report._schema import SCHEMA_VERSION, case_schema, schema_errors

__all__ = [
    "ATTACHMENT_KEY",
    "BASELINE_KIND",
    "RECORD_KEY",
    "SCHEMA_VERSION",
    "Change",
    "CompareError",
    "MergeError",
    "MergeResult",
    "RunOutcomes",
    "baseline_schema",
    "case_schema",
    "collect",
    "diff",
    "load_baseline",
    "load_outcomes",
    "merge",
    "schema_errors",
    "write_baseline",
]

__getattr__ = lazy_exports(__name__, __file__, __all__)
