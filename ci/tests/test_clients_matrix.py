"""``nox -s clients``: its pins parse into one venv per client, each with its tests; its table; never in ``tests``."""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ci.clients.matrix import (
    CLIENTS,
    FAILURES,
    FEATURES,
    cell_text,
    matrix_lines,
    read_outcomes,
    read_seen,
    seen_lines,
    write_outcomes,
)

ROOT = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^[A-Za-z0-9_.-]+(\[[a-z0-9,-]+\])?==[0-9][0-9A-Za-z.+-]*$")


@pytest.fixture(scope="module")
def noxfile() -> dict[str, Any]:
    return runpy.run_path(str(ROOT / "noxfile.py"))


def test_every_client_has_exact_pins_and_its_tests(noxfile: dict[str, Any]) -> None:
    sections = noxfile["client_sections"](noxfile["CLIENTS_REQUIREMENTS"].read_text())
    assert tuple(sections) == CLIENTS
    for name, requirements in sections.items():
        assert requirements, name
        assert all(PIN.match(r) for r in requirements), (name, requirements)
        assert (ROOT / "ci" / "clients" / f"test_{name.replace('-', '_')}.py").is_file(), name


def test_a_requirement_outside_a_section_is_refused(noxfile: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="comes before any"):
        noxfile["client_sections"]("openai==1.0\n# [openai]\n")


def test_clients_is_not_in_make_ci(noxfile: dict[str, Any]) -> None:
    assert "clients" not in noxfile["nox"].options.sessions
    assert "clients" not in (ROOT / "Makefile").read_text().split("\nci:")[1].split("\n\n")[0]


def test_the_tests_sessions_never_collect_the_clients() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", "ci"],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ci/tests/test_clients_matrix.py" in done.stdout
    assert "ci/clients" not in done.stdout


def test_cells_show_every_outcome_worst_first() -> None:
    assert cell_text([]) == "-"
    assert cell_text(["PASS"]) == "PASS"
    assert cell_text(["PASS", "PASS"]) == "PASS(2)"
    assert cell_text(["PASS", "XFAIL", "PASS", "FAIL"]) == "FAIL(1) XFAIL(1) PASS(2)"


def test_the_table_merges_every_venv(tmp_path: Path) -> None:
    write_outcomes(tmp_path / "openai.json", {("openai", "chat"): ["PASS"], ("openai", "stream"): ["FAIL"]})
    write_outcomes(tmp_path / "lm-eval.json", {("lm-eval", "loglikelihood"): ["PASS", "XFAIL"]})
    lines = matrix_lines(read_outcomes(sorted(tmp_path.glob("*.json"))))
    assert lines[0].split() == ["client", "chat", "stream", "loglikelihood"]  # only the columns some test filled
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:]}
    assert list(rows) == list(CLIENTS)
    assert rows["openai"] == ["PASS", "FAIL", "-"]
    assert rows["lm-eval"] == ["-", "-", "XFAIL(1)", "PASS(1)"]
    assert rows["inspect-ai"] == ["-", "-", "-"]
    assert not list(tmp_path.glob("*.partial"))
    assert set(FEATURES) >= {"chat", "stream", "loglikelihood"}


def test_the_failure_table_and_what_each_client_saw(tmp_path: Path) -> None:
    """The failure cells are a second table; their observations come back merged, in table order."""
    write_outcomes(
        tmp_path / "litellm.json",
        {("litellm", "chat"): ["PASS"], ("litellm", "context"): ["PASS"]},
        {("litellm", "context"): "completion: raises litellm.ContextWindowExceededError"},
    )
    write_outcomes(
        tmp_path / "openai.json",
        {("openai", "cut"): ["FAIL"], ("openai", "think-empty"): ["PASS"]},
        {("openai", "cut"): "stream: returns content 'Pa'", ("openai", "think-empty"): "create: returns content ''"},
    )
    files = sorted(tmp_path.glob("*.json"))
    merged = read_outcomes(files)
    assert matrix_lines(merged)[0].split() == ["client", "chat"]  # the failures stay out of the feature table
    failures = matrix_lines(merged, FAILURES)
    assert failures[0].split() == ["client", "think-empty", "cut", "context"]
    rows = {line.split()[0]: line.split()[1:] for line in failures[1:]}
    assert rows["openai"] == ["PASS", "FAIL", "-"]
    assert rows["litellm"] == ["-", "-", "PASS"]
    assert seen_lines(read_seen(files)) == [
        "openai x think-empty  create: returns content ''",
        "openai x cut          stream: returns content 'Pa'",
        "litellm x context     completion: raises litellm.ContextWindowExceededError",
    ]
    assert matrix_lines({}, FAILURES) == []
    assert not set(FAILURES) & set(FEATURES)
