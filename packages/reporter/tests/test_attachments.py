"""``evaljig.attachment``: files a test attaches to its own case report (plugin end to end, pytester)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from evaljig_report import ATTACHMENT_KEY, schema_errors

from .report_samples import PNG, report_suite

ATTACHING_TESTS = f"""
import base64

KEY = {ATTACHMENT_KEY!r}
PNG = {base64.b64encode(PNG).decode()!r}


def test_plain(request):
    request.node.user_properties.append((KEY, {{"name": "config.yaml", "mime_type": "text/yaml", "text": "a: 1\\n"}}))
    request.node.user_properties.append((KEY, {{"name": "../../journal.jsonl", "text": "{{}}\\n"}}))
    request.node.user_properties.append((KEY, {{"name": "blob.bin", "base64": base64.b64encode(b"\\0\\1").decode()}}))
    assert False, "fails on purpose"


def test_broken_attachment(request):
    request.node.user_properties.append((KEY, {{"name": "nothing.txt", "mime_type": "text/plain"}}))


def test_contract(request):
    request.node.user_properties.append(("evaljig.case", {{
        "suite": "s", "case_id": "c1", "case": {{"case_id": "c1"}},
        "inference": {{"artifacts": [{{"name": "plot.png", "mime_type": "image/png", "base64": PNG}}]}},
        "metric": {{"name": "exact", "status": "pass", "score": 1.0, "reason": ""}}, "error": None,
    }}))
    request.node.user_properties.append((KEY, {{"name": "plot.png", "mime_type": "text/plain", "text": "log"}}))
"""


def docs(root: Path) -> dict[str, tuple[dict[str, Any], Path]]:
    out = {}
    for path in root.rglob("case.json"):
        doc = json.loads(path.read_text())
        out[doc["source"]["case_id"]] = (doc, path.parent)
    return out


@pytest.fixture
def attaching(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    return report_suite(pytester, monkeypatch, test_attach=ATTACHING_TESTS)


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["solo", "xdist"])
def test_attachments_become_files_of_the_tests_case(attaching: pytest.Pytester, xdist: list[str]) -> None:
    attaching.runpytest("-p", "no:cacheprovider", "--evaljig-all-tests", *xdist).assert_outcomes(passed=2, failed=1)
    cases = docs(attaching.path / "reports")
    assert all(schema_errors(doc) == [] for doc, _ in cases.values())

    plain, folder = cases["test_plain"]
    assert plain["status"] == "fail"
    assert [(a["name"], a["mime_type"], a["status"], a.get("file")) for a in plain["artifacts"]] == [
        ("config.yaml", "text/yaml", "written", "config.yaml"),
        ("../../journal.jsonl", "application/octet-stream", "written", "journal.jsonl"),  # never leaves the folder
        ("blob.bin", "application/octet-stream", "written", "blob.bin"),
    ]
    assert (folder / "config.yaml").read_text() == "a: 1\n"
    assert (folder / "blob.bin").read_bytes() == b"\0\1"

    broken, _ = cases["test_broken_attachment"]
    assert broken["status"] == "error"
    assert broken["artifacts"][0]["status"] == "error"
    assert broken["errors"] == ["attachment 'nothing.txt': an attachment needs 'text' (a string) or 'base64'"]

    contract, folder = cases["c1"]  # attached to the case the test recorded, after the tool's own artifacts
    assert [a.get("file") for a in contract["artifacts"]] == ["plot.png", "plot-2.png"]
    assert (folder / "plot-2.png").read_text() == "log"
    assert "test_contract" not in cases  # no plain case besides the contract one


def test_without_all_tests_a_plain_test_that_attached_files_is_still_recorded(attaching: pytest.Pytester) -> None:
    """Its files are what a failure is debugged with (a failed LEV case's config, argv, journal): they land."""
    attaching.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2, failed=1)
    cases = docs(attaching.path / "reports")
    assert sorted(cases) == ["c1", "test_broken_attachment", "test_plain"]
    assert cases["test_plain"][0]["status"] == "fail"
    assert (cases["test_plain"][1] / "config.yaml").read_text() == "a: 1\n"


PLAIN_ONLY = """
def test_nothing_attached():
    assert False, "fails on purpose"
"""


def test_without_all_tests_a_plain_test_without_attachments_costs_no_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = report_suite(pytester, monkeypatch, test_plain_only=PLAIN_ONLY)
    suite.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)
    assert docs(suite.path / "reports") == {}
