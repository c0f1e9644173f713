"""junit.xml: one ``<testsuite>`` per session, one ``<testcase>`` per case, so CI test tabs show evals.

Infrastructure errors (``<error>``: the tool or a metric raised, a worker crashed) are kept apart
from wrong answers (``<failure>``: a metric failed), and every testcase carries its scores, reasons
and attempts as ``<properties>``.
"""

from __future__ import annotations

import re
from functools import lru_cache
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


@lru_cache(maxsize=4096)
def _property_name(metric: str, field: str) -> str:
    """``name="evaljig.metric.<metric>.<field>"``, escaped once per metric and field (a merge writes 100,000s)."""
    return _attr(f"evaljig.metric.{metric}.{field}")


def _property(name: str, value: str) -> str:
    """One ``<property>``; ``name`` is already an attribute, ``value`` plain text that needs no escaping."""
    return f'        <property name={name} value="{value}" />\n'


def _properties(row: CaseRow) -> str:
    """Per case: its status, and per metric its status, score, reason and, when repeated, runs and passes.

    CI test tabs (GitLab, Jenkins, the GitHub test reporters) show ``<properties>`` of a testcase,
    so the scores and reasons stay visible next to the verdict. Only reasons need escaping: the
    other values are statuses and numbers.
    """
    parts = ["      <properties>\n", _property('"evaljig.status"', row.status)]
    if row.attempts:
        parts.append(_property('"evaljig.attempts"', str(len(row.attempts))))
    for m in row.metrics:
        parts.append(_property(_property_name(m.name, "status"), m.status))
        if m.score is not None:
            parts.append(_property(_property_name(m.name, "score"), f"{m.score:g}"))
        if m.reason:
            parts.append(f"        <property name={_property_name(m.name, 'reason')} value={_attr(m.reason)} />\n")
        if m.runs is not None:
            parts.append(_property(_property_name(m.name, "runs"), str(m.runs)))
            parts.append(_property(_property_name(m.name, "passes"), str(m.passes)))
    parts.append("      </properties>\n")
    return "".join(parts)


def _testcase(row: CaseRow) -> str:
    """A case: ``<error>`` when something broke (the tool or a metric raised, a worker crashed, a timeout),
    ``<failure>`` when the tool answered and a metric judged it wrong, ``<skipped>``; scores as properties."""
    head = f'    <testcase classname={_attr(row.suite)} name={_attr(row.case_id)} time="{row.duration_s:.6f}">\n'
    body = _properties(row)
    if row.status == "pass":
        return head + body + "    </testcase>\n"
    details = "\n".join(
        f"{m.name}: {m.status}"
        + (f" (score {m.score:g})" if m.score is not None else "")
        + (f" - {m.reason}" if m.reason else "")
        for m in row.metrics
    )
    details = "\n".join([*row.errors, details]) if row.errors else details
    tag = {"fail": "failure", "error": "error", "skip": "skipped"}[row.status]
    kind = {"fail": "wrong answer", "error": "infrastructure error", "skip": "skipped"}[row.status]
    verdict = f"      <{tag} message={_attr(row.why()[:500])} type={_attr(kind)}>{_text(details)}</{tag}>\n"
    return head + body + verdict + "    </testcase>\n"


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
