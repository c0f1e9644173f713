"""junit.xml for CI test tabs: scores, reasons and attempts as ``<properties>``; errors apart from failures."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from evaljig_report import merge

from .report_samples import Populate, make_record
from .test_gate import repeated

#: The JUnit structure CI readers accept (the Jenkins/Surefire XSD, as pytest's xunit2 writes it): element ->
#: (required attributes, allowed children).
STRUCTURE = {
    "testsuites": ({"name", "tests", "failures", "errors", "skipped"}, {"testsuite"}),
    "testsuite": ({"name", "tests", "failures", "errors", "skipped"}, {"testcase", "properties"}),
    "testcase": ({"classname", "name", "time"}, {"properties", "failure", "error", "skipped"}),
    "properties": (set(), {"property"}),
    "property": ({"name", "value"}, set()),
    "failure": ({"message", "type"}, set()),
    "error": ({"message", "type"}, set()),
    "skipped": ({"message", "type"}, set()),
}


def check_structure(element: ET.Element) -> None:
    required, children = STRUCTURE[element.tag]
    assert required <= set(element.attrib), (element.tag, element.attrib)
    tags = [child.tag for child in element]
    assert set(tags) <= children, (element.tag, tags)
    if element.tag == "testcase":  # properties first, then at most one verdict
        assert tags[:1] == ["properties"]
        assert len(tags) <= 2
    for child in element:
        check_structure(child)


def test_junit_keeps_infrastructure_errors_apart_from_wrong_answers_and_carries_scores(
    populate: Populate, tmp_path: Path
) -> None:
    records = [
        make_record("right", score=0.97),
        make_record("wrong", status="fail", reason="expected 4, got 5"),
        {**make_record("crashed", status="fail", reason="tool raised: TimeoutError: 30 s"),
         "error": "TimeoutError: 30 s", "error_source": "tool", "inference": None},
        *repeated("noisy", "ppfpp"),
    ]  # fmt: skip
    run = populate(run="r", records=records)
    merge([run], run / "merged")
    root = ET.parse(run / "merged" / "junit.xml").getroot()
    check_structure(root)
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "2", "1")
    cases = {c.get("name"): c for c in root.iter("testcase")}
    props = {name: {p.get("name"): p.get("value") for p in case.iter("property")} for name, case in cases.items()}

    assert props["right"] == {
        "evaljig.status": "pass",
        "evaljig.metric.exact.status": "pass",
        "evaljig.metric.exact.score": "0.97",
    }
    wrong = cases["wrong"].find("failure")
    assert wrong is not None
    assert (wrong.get("type"), wrong.get("message")) == ("wrong answer", "exact: expected 4, got 5")
    assert props["wrong"]["evaljig.metric.exact.reason"] == "expected 4, got 5"

    crashed = cases["crashed"].find("error")
    assert cases["crashed"].find("failure") is None
    assert crashed is not None
    assert crashed.get("type") == "infrastructure error"
    assert crashed.get("message", "").startswith("tool raised: TimeoutError: 30 s")

    assert props["noisy"]["evaljig.attempts"] == "5"
    assert (props["noisy"]["evaljig.metric.exact.runs"], props["noisy"]["evaljig.metric.exact.passes"]) == ("5", "4")
    assert props["noisy"]["evaljig.metric.exact.reason"] == "4 of 5 runs passed; attempt 3: exact fail"
