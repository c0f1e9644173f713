"""junit.xml: one ``<testsuite>`` per session, one ``<testcase>`` per case, so CI test tabs show evals."""

from __future__ import annotations

import re
from html import escape
from itertools import groupby
from pathlib import Path

from evaljig_common import open_atomic
from evaljig_report._rows import CaseRow, status_counts

# XML 1.0 forbids most control characters even when escaped.
_REPLACEMENT = "\ufffd"
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(text: str) -> str:
    return escape(_INVALID_XML.sub(_REPLACEMENT, text), quote=False)


def _attr(text: str) -> str:
    escaped = escape(_INVALID_XML.sub(_REPLACEMENT, text)).replace("\n", "&#10;")
    return f'"{escaped}"'


def _testcase(row: CaseRow) -> str:
    head = f'    <testcase classname={_attr(row.suite)} name={_attr(row.case_id)} time="{row.duration_s:.6f}"'
    if row.status == "pass":
        return head + " />\n"
    details = "\n".join(
        f"{m.name}: {m.status}"
        + (f" (score {m.score:g})" if m.score is not None else "")
        + (f" - {m.reason}" if m.reason else "")
        for m in row.metrics
    )
    details = "\n".join([*row.errors, details]) if row.errors else details
    tag = {"fail": "failure", "error": "error", "skip": "skipped"}[row.status]
    return f"{head}>\n      <{tag} message={_attr(row.why()[:500])}>{_text(details)}</{tag}>\n    </testcase>\n"


def write_junit(path: Path, rows: list[CaseRow]) -> None:
    """Stream the rows (sorted by session) into ``path``."""
    total = status_counts(rows)
    with open_atomic(path) as fh:
        fh.write('<?xml version="1.0" encoding="utf-8"?>\n')
        fh.write(
            f'<testsuites name="evaljig" tests="{len(rows)}" failures="{total["fail"]}" '
            f'errors="{total["error"]}" skipped="{total["skip"]}">\n'
        )
        for session, group in groupby(rows, key=lambda r: r.session):
            members = list(group)
            c = status_counts(members)
            fh.write(
                f'  <testsuite name={_attr(session)} tests="{len(members)}" failures="{c["fail"]}" '
                f'errors="{c["error"]}" skipped="{c["skip"]}">\n'
            )
            for row in members:
                fh.write(_testcase(row))
            fh.write("  </testsuite>\n")
        fh.write("</testsuites>\n")
