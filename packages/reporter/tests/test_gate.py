"""The noise-aware gate: Fisher's exact test on repeated runs, the deterministic rule, ``--must-pass``, ``--alpha``."""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb
from pathlib import Path
from typing import Any

import pytest

from evaljig_report import merge
from evaljig_report._cli import main
from evaljig_report._significance import fisher_better, fisher_worse

from .report_samples import Populate, make_record


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ((5, 5, 0, 5), Fraction(1, comb(10, 5))),  # scipy.stats.fisher_exact([[5, 0], [0, 5]], "greater"): 0.003968
        ((5, 5, 4, 5), Fraction(1, 2)),
        ((4, 5, 0, 5), Fraction(6, 252)),
        ((10, 10, 5, 10), Fraction(comb(15, 5), comb(20, 10))),
        ((1, 1, 0, 1), Fraction(1, 2)),  # one run each can never be significant: the deterministic rule decides
        ((3, 5, 3, 5), Fraction(1)),  # hypergeometric tail from the observed count: 1 - P(fewer new failures)
        ((0, 0, 0, 5), Fraction(1)),  # no base run: nothing to test
    ],
)
def test_fisher_one_sided_is_the_exact_hypergeometric_tail(
    table: tuple[int, int, int, int], expected: Fraction
) -> None:
    if table == (3, 5, 3, 5):
        failures, new_failures = 4, 2
        expected = Fraction(
            sum(comb(failures, x) * comb(10 - failures, 5 - x) for x in range(new_failures, failures + 1)), comb(10, 5)
        )
    assert fisher_worse(*table) == pytest.approx(float(expected), rel=1e-15)


def test_fisher_better_mirrors_worse() -> None:
    assert fisher_better(0, 5, 5, 5) == fisher_worse(5, 5, 0, 5)
    with pytest.raises(ValueError, match="passes 6 must be between 0 and runs 5"):
        fisher_worse(6, 5, 0, 5)


def repeated(case_id: str, outcomes: str, *, metric: str = "exact") -> list[dict[str, Any]]:
    """One record per attempt: ``outcomes`` such as ``"ppfpp"`` (p pass, f fail, s skip)."""
    status = {"p": "pass", "f": "fail", "s": "skip"}
    records = []
    for n, o in enumerate(outcomes, start=1):
        record = make_record(case_id, metric, status[o])
        if len(outcomes) > 1:
            record.update(attempt=n, attempts=len(outcomes))
        records.append(record)
    return records


@pytest.fixture
def two_runs(populate: Populate) -> Any:
    def make(base: dict[str, str], new: dict[str, str]) -> tuple[Path, Path]:
        paths = []
        for run, spec in (("base", base), ("new", new)):
            records = [r for case_id, outcomes in spec.items() for r in repeated(case_id, outcomes)]
            folder = populate(run=run, records=records)
            merge([folder], folder / "merged")
            paths.append(folder / "merged")
        return paths[0], paths[1]

    return make


def compare(base: Path, new: Path, *extra: str) -> tuple[int, list[dict[str, Any]]]:
    out = base.parent.parent / "changes.json"
    args = ["compare", str(base), str(new), "--fail-on-regression", "--no-step-summary", "--json", str(out)]
    code = main([*args, *extra])
    return code, json.loads(out.read_text())


def kinds(changes: list[dict[str, Any]]) -> dict[str, str]:
    return {c["case_id"]: c["kind"] for c in changes}


def test_merge_folds_attempts_into_runs_and_passes(two_runs: Any) -> None:
    base, _ = two_runs({"noisy": "ppfps", "steady": "ppppp"}, {"noisy": "p"})
    rows = {r["case_id"]: r for r in json.loads((base / "index.json").read_text())["cases"]}
    noisy = rows["noisy"]["metrics"][0]
    assert (noisy["runs"], noisy["passes"], noisy["status"]) == (4, 3, "fail")  # the skip is no run
    assert noisy["reason"] == "3 of 4 runs passed; attempt 3: exact fail"
    assert noisy["score"] == pytest.approx(0.75)
    assert (rows["steady"]["metrics"][0]["runs"], rows["steady"]["status"]) == (5, "pass")
    assert len(rows["noisy"]["paths"]) == 5  # one case file per attempt, none counted as a duplicate
    assert json.loads((base / "index.json").read_text())["duplicates_merged"] == 0
    summary = (base / "summary.md").read_text()
    assert "Repeated cases (up to k=5 runs): pass^k 1/2 metrics passed every run · pass@k 2/2" in summary
    html = (base / "report.html").read_text()
    assert '["exact","fail",0.75,4,3]' in html  # the row's metric with runs and passes, shown as "exact 0.75 3/4"


def test_noise_is_changed_not_regressed_and_a_significant_drop_regresses(
    two_runs: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new = two_runs(
        {"flaky": "ppppp", "dead": "ppppp", "worse": "ppppp", "healed": "fffff", "same": "ppfpp"},
        {"flaky": "ppfpp", "dead": "fffff", "worse": "fffpf", "healed": "ppppp", "same": "pppfp"},
    )
    code, changes = compare(base, new)
    assert code == 1
    assert kinds(changes) == {"flaky": "changed", "dead": "regressed", "worse": "regressed", "healed": "improved"}
    p = {c["case_id"]: c["p_value"] for c in changes}
    assert p["flaky"] == pytest.approx(0.5)
    assert p["worse"] == pytest.approx(6 / 252)  # 1 of 5 passed where 5 of 5 did
    out = capsys.readouterr().out
    assert "| exact | pass (1), 5/5 runs passed | fail (0.8), 4/5 runs passed, p=0.5 |" in out
    assert "- new: pass^k 1/5 · pass@k 4/5" in out


def test_alpha_decides_what_is_significant(two_runs: Any) -> None:
    base, new = two_runs({"worse": "ppppp"}, {"worse": "pfffp"})  # p = 0.083
    assert compare(base, new)[0] == 0
    code, changes = compare(base, new, "--alpha", "0.1")
    assert code == 1
    assert kinds(changes) == {"worse": "regressed"}


def test_a_single_base_run_and_repeated_new_runs_regress_when_every_new_run_fails(two_runs: Any) -> None:
    base, new = two_runs({"a": "p", "b": "p"}, {"a": "fffff", "b": "ppfpp"})
    code, changes = compare(base, new)
    assert code == 1
    assert kinds(changes) == {"a": "regressed", "b": "changed"}


def test_one_run_each_is_judged_exactly_as_before(two_runs: Any) -> None:
    base, new = two_runs({"a": "p", "b": "f"}, {"a": "f", "b": "p"})
    code, changes = compare(base, new)
    assert code == 1
    assert kinds(changes) == {"a": "regressed", "b": "improved"}
    assert all("p_value" not in c and set(c["new"]) == {"status", "score"} for c in changes)


def test_must_pass_gates_on_any_failure_even_without_a_regression(
    two_runs: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new = two_runs({"login-ok": "ppfpp", "other": "ppfpp"}, {"login-ok": "ppfpp", "other": "ppfpp"})
    assert compare(base, new)[0] == 0
    code, changes = compare(base, new, "--must-pass", "login-*")
    assert code == 1
    assert kinds(changes) == {"login-ok": "must-pass"}
    captured = capsys.readouterr()
    assert "### Must pass, did not (1)" in captured.out
    assert "compare failed: must-pass" in captured.err
    code, _ = compare(base, new, "--must-pass", "tests/test_tools.py::TestCodeTool::other")
    assert code == 1


def test_a_must_pass_pattern_matching_nothing_is_an_error(two_runs: Any, capsys: pytest.CaptureFixture[str]) -> None:
    base, new = two_runs({"a": "p"}, {"a": "p"})
    assert main(["compare", str(base), str(new), "--must-pass", "logn-*", "--no-step-summary"]) == 2
    assert "--must-pass 'logn-*' matches no case of" in capsys.readouterr().err


@pytest.mark.parametrize("alpha", ["0", "1", "nan", "x"])
def test_a_bad_alpha_is_a_usage_error(two_runs: Any, alpha: str, capsys: pytest.CaptureFixture[str]) -> None:
    base, new = two_runs({"a": "p"}, {"a": "p"})
    with pytest.raises(SystemExit) as exit_:
        main(["compare", str(base), str(new), "--alpha", alpha])
    assert exit_.value.code == 2
    assert "must be a number between 0 and 1" in capsys.readouterr().err


def test_malformed_runs_in_an_index_name_the_field(two_runs: Any, capsys: pytest.CaptureFixture[str]) -> None:
    base, new = two_runs({"a": "pp"}, {"a": "pp"})
    index = json.loads((new / "index.json").read_text())
    index["cases"][0]["metrics"][0]["passes"] = 7
    (new / "index.json").write_text(json.dumps(index))
    assert main(["compare", str(base), str(new), "--no-step-summary"]) == 2
    assert "cases[0]: metrics[0].runs/passes: expected whole numbers with 0 <= passes <= runs, found 2/7" in (
        capsys.readouterr().err
    )
