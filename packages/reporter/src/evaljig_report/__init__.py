"""evaljig-report: per-case eval reports from pytest, merged across workers, sessions and CI shards.

The pytest plugin (``evaljig_report.plugin``) is registered through the ``pytest11`` entry
point; these are the names other packages and scripts may use.
"""

from __future__ import annotations

from evaljig_report._collect import MergeResult, collect
from evaljig_report.attachments import ATTACHMENT_KEY
from evaljig_report.compare import Change, diff, load_outcomes
from evaljig_report.layout import Layout, run_id, session_name
from evaljig_report.merge import merge
from evaljig_report.recorder import PROPERTY_KEY, PYTEST_METRIC, Recorder, write_session_index
from evaljig_report.schema import SCHEMA_VERSION, case_schema, schema_errors

__all__ = [
    "ATTACHMENT_KEY",
    "PROPERTY_KEY",
    "PYTEST_METRIC",
    "SCHEMA_VERSION",
    "Change",
    "Layout",
    "MergeResult",
    "Recorder",
    "case_schema",
    "collect",
    "diff",
    "load_outcomes",
    "merge",
    "run_id",
    "schema_errors",
    "session_name",
    "write_session_index",
]
