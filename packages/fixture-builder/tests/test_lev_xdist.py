"""``load_with_modules_together``: a kept-together module's cases all run on one xdist worker."""

from __future__ import annotations

import pytest

from testkit.xdist_workers import workers_by_module

CONFTEST = """
from evaljig_fixtures import load_with_modules_together

def pytest_xdist_make_scheduler(config, log):
    return load_with_modules_together(config, log, ["test_in_process.py"])
"""
CASES = "\n".join(f"def test_{i}():\n    pass\n" for i in range(6))
INNER = ("-p", "xdist", "-n", "2", "-v", "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:evaljig_report")


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_in_process=CASES, test_cli_a=CASES, test_cli_b=CASES)
    return pytester


def test_the_kept_together_module_runs_on_one_worker(suite: pytest.Pytester) -> None:
    result = suite.runpytest_subprocess("--dist", "load", *INNER)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=18)
    ran = workers_by_module(result.stdout.str())
    assert len(ran["test_in_process.py"]) == 1, ran
    assert (ran["test_cli_a.py"] | ran["test_cli_b.py"]) - ran["test_in_process.py"]  # the other worker took cases


def test_another_dist_mode_is_left_to_xdist(suite: pytest.Pytester) -> None:
    result = suite.runpytest_subprocess("--dist", "loadfile", *INNER)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(["*LoadFileScheduling*"])  # pytest -v names xdist's own scheduler
