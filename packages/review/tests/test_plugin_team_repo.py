"""The ``golden`` fixture in a team's repository: no evaljig tree, no conftest, only the installed plugin.

Real pytest subprocesses (pytester) with real syrupy and xdist: the goldens land in
``golden/<test module path>/<test>.<ext>``, syrupy's own flags drive them, and the orphan check
works for this layout too.
"""

from __future__ import annotations

import pytest

PIPELINE_TESTS = """
def test_config(golden):
    assert golden == {"model_parameters": {"model_name": "openai/acme", "temperature": 0.0}, "tasks": ["a", "b"]}


def test_banner(golden):
    assert golden(name="banner") == "line one\\nline two"


class TestNested:
    def test_row(self, golden):
        assert golden == [1, 2.5, None, "x"]
"""

GOLDENS = [
    "evals/tests/test_pipeline/TestNested.test_row.yaml",
    "evals/tests/test_pipeline/test_banner[banner].txt",
    "evals/tests/test_pipeline/test_config.yaml",
]


@pytest.fixture
def team(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A team repository: pyproject.toml at the top, its pipeline's tests in ``evals/tests/``."""
    monkeypatch.setenv("EVALJIG_REPORT", "0")
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\ntestpaths = ["evals"]\n')
    (pytester.path / "evals" / "tests").mkdir(parents=True)
    (pytester.path / "evals" / "tests" / "test_pipeline.py").write_text(PIPELINE_TESTS, encoding="utf-8")
    return pytester


def goldens(team: pytest.Pytester, folder: str = "golden") -> list[str]:
    root = team.path / folder
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) if root.is_dir() else []


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["solo", "xdist"])
def test_snapshot_update_writes_readable_goldens_by_module_path(team: pytest.Pytester, xdist: list[str]) -> None:
    missing = team.runpytest_subprocess("-p", "no:cacheprovider", *xdist)
    assert missing.ret == pytest.ExitCode.TESTS_FAILED  # no golden yet: syrupy fails each assertion

    update = team.runpytest_subprocess("-p", "no:cacheprovider", "--snapshot-update", *xdist)

    assert update.ret == pytest.ExitCode.OK
    assert goldens(team) == GOLDENS
    config = (team.path / "golden" / GOLDENS[2]).read_text(encoding="utf-8")
    assert config == "model_parameters:\n  model_name: openai/acme\n  temperature: 0.0\ntasks:\n- a\n- b\n"
    assert (team.path / "golden" / GOLDENS[1]).read_text(encoding="utf-8") == "line one\nline two\n"
    again = team.runpytest_subprocess("-p", "no:cacheprovider", *xdist)
    assert again.ret == pytest.ExitCode.OK
    again.assert_outcomes(passed=3)


def test_a_changed_value_fails_with_syrupys_diff(team: pytest.Pytester) -> None:
    assert team.runpytest_subprocess("-p", "no:cacheprovider", "--snapshot-update").ret == pytest.ExitCode.OK
    test_file = team.path / "evals" / "tests" / "test_pipeline.py"
    test_file.write_text(PIPELINE_TESTS.replace('"temperature": 0.0', '"temperature": 0.3'), encoding="utf-8")

    result = team.runpytest_subprocess("-p", "no:cacheprovider")

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*assert golden == received*", "*1 snapshot failed. 2 snapshots passed.*"])


def test_the_golden_folder_is_configurable(team: pytest.Pytester) -> None:
    team.makepyprojecttoml('[tool.pytest.ini_options]\ntestpaths = ["evals"]\nevaljig_golden_dir = "evals/snapshots"\n')

    assert team.runpytest_subprocess("-p", "no:cacheprovider", "--snapshot-update").ret == pytest.ExitCode.OK

    assert goldens(team, "evals/snapshots") == GOLDENS
    assert not (team.path / "golden").exists()


def _orphaned(team: pytest.Pytester) -> None:
    assert team.runpytest_subprocess("-p", "no:cacheprovider", "--snapshot-update").ret == pytest.ExitCode.OK
    gone = team.path / "golden" / "evals" / "tests" / "old" / "test_gone"  # its module was deleted
    gone.mkdir(parents=True)
    (gone / "test_q.yaml").write_text("q: 1\n", encoding="utf-8")


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["solo", "xdist"])
def test_a_golden_folder_without_its_module_fails_and_update_deletes_it(
    team: pytest.Pytester, xdist: list[str]
) -> None:
    _orphaned(team)

    result = team.runpytest_subprocess("-p", "no:cacheprovider", *xdist)

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*golden folders without a test module (1 orphaned)*",
            "golden/evals/tests/old/test_gone/ (1 file(s)): no evals/tests/old/test_gone.py",
            "delete them with `pytest --snapshot-update`",
        ]
    )
    update = team.runpytest_subprocess("-p", "no:cacheprovider", "--snapshot-update", *xdist)
    assert update.ret == pytest.ExitCode.OK
    assert goldens(team) == GOLDENS
    assert not (team.path / "golden" / "evals" / "tests" / "old").exists()  # emptied parents go too


def test_warn_unused_reports_and_keeps(team: pytest.Pytester) -> None:
    _orphaned(team)

    result = team.runpytest_subprocess("-p", "no:cacheprovider", "--snapshot-warn-unused")

    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*(1 orphaned)*"])
    assert "evals/tests/old/test_gone/test_q.yaml" in goldens(team)


def test_a_run_pointed_elsewhere_leaves_the_orphan_alone(team: pytest.Pytester) -> None:
    _orphaned(team)
    (team.path / "other").mkdir()
    (team.path / "other" / "test_other.py").write_text("def test_ok():\n    pass\n", encoding="utf-8")

    result = team.runpytest_subprocess("-p", "no:cacheprovider", "other")

    assert result.ret == pytest.ExitCode.OK
    assert "orphaned" not in result.stdout.str()


def test_a_bad_layout_is_one_usage_error(team: pytest.Pytester) -> None:
    team.makepyprojecttoml('[tool.pytest.ini_options]\nevaljig_golden_layout = "flat"\n')

    result = team.runpytest_subprocess("-p", "no:cacheprovider")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*evaljig_golden_layout: 'flat' is not one of path, packages*"])
