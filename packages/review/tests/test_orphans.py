"""Golden folders of deleted test modules (layout ``packages``, evaljig's own): fail the run, deleted by
``--snapshot-update`` (pytester, real syrupy, the installed plugin and no conftest)."""

from __future__ import annotations

import pytest

KEPT = """
def test_shape(golden):
    assert golden == {"a": 1}
"""


@pytest.fixture
def repo(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A workspace in miniature: evaljig's golden settings, two packages, goldens used and orphaned."""
    monkeypatch.setenv("EVALJIG_REPORT", "0")  # no per-case reports of the inner runs
    pytester.makefile(
        ".ini",
        pytest="[pytest]\ntestpaths = packages tools\nevaljig_golden_layout = packages\n"
        "evaljig_golden_update_command = make golden-update\n",
    )
    files = {
        "packages/alpha/tests/test_kept.py": KEPT,
        "packages/beta/tests/test_beta.py": "def test_ok():\n    pass\n",
        "tools/test_tool.py": "def test_outside_packages():\n    pass\n",  # syrupy scans its site too
        "golden/alpha/test_kept/test_shape.yaml": "a: 1\n",
        "golden/alpha/test_deleted/test_y.yaml": "b: 2\n",  # its module was deleted
        "golden/beta/test_gone/test_z.txt": "z\n",  # the same, in another package
        "golden/retired/test_m/test_q.txt": "q\n",  # the whole package is gone
    }
    for name, text in files.items():
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return pytester


def goldens(repo: pytest.Pytester) -> list[str]:
    return sorted(p.relative_to(repo.path / "golden").as_posix() for p in (repo.path / "golden").rglob("*.*"))


ALL = ["alpha/test_deleted/test_y.yaml", "alpha/test_kept/test_shape.yaml", "beta/test_gone/test_z.txt",
       "retired/test_m/test_q.txt"]  # fmt: skip


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["solo", "xdist"])
def test_a_full_run_fails_on_every_orphaned_module_folder(repo: pytest.Pytester, xdist: list[str]) -> None:
    result = repo.runpytest_subprocess("-p", "no:cacheprovider", *xdist)

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*golden folders without a test module (3 orphaned)*"])
    result.stdout.fnmatch_lines(["golden/alpha/test_deleted/ (1 file(s)): no packages/alpha/**/test_deleted.py"])
    result.stdout.fnmatch_lines(["golden/beta/test_gone/ (1 file(s)): no packages/beta/**/test_gone.py"])
    result.stdout.fnmatch_lines(["golden/retired/test_m/ (1 file(s)): no packages/retired/**/test_m.py"])
    result.stdout.fnmatch_lines(["*make golden-update*"])
    assert "test_kept/" not in result.stdout.str()
    assert "worker snapshot reports" not in result.stdout.str()  # every worker's syrupy report arrived
    result.stdout.fnmatch_lines(["*snapshots unused*"])  # syrupy's own check ran too
    result.assert_outcomes(passed=3)
    assert goldens(repo) == ALL  # reporting never deletes


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["solo", "xdist"])
def test_snapshot_update_deletes_them_and_the_next_run_is_green(repo: pytest.Pytester, xdist: list[str]) -> None:
    update = repo.runpytest_subprocess("-p", "no:cacheprovider", "--snapshot-update", *xdist)

    assert update.ret == pytest.ExitCode.OK
    update.stdout.fnmatch_lines(["*golden folders without a test module (3 deleted)*"])
    assert goldens(repo) == ["alpha/test_kept/test_shape.yaml"]
    assert sorted(p.name for p in (repo.path / "golden").iterdir()) == ["alpha"]  # emptied package folders go too
    assert [p.name for p in (repo.path / "golden" / "alpha").iterdir()] == ["test_kept"]  # no empty module folder
    assert repo.runpytest_subprocess("-p", "no:cacheprovider", *xdist).ret == pytest.ExitCode.OK


@pytest.mark.parametrize(
    "target", ["packages/alpha", "packages/alpha/tests/test_kept.py::test_shape"], ids=["folder", "node-id"]
)
def test_a_partial_run_checks_only_the_packages_it_was_pointed_at(repo: pytest.Pytester, target: str) -> None:
    result = repo.runpytest_subprocess("-p", "no:cacheprovider", target)

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*(1 orphaned)*", "golden/alpha/test_deleted/ *"])
    assert "beta" not in result.stdout.str()
    assert "retired" not in result.stdout.str()

    assert repo.runpytest_subprocess("-p", "no:cacheprovider", "--snapshot-update", target).ret == pytest.ExitCode.OK
    assert goldens(repo) == [g for g in ALL if not g.startswith("alpha/test_deleted/")]


def test_the_goldens_of_a_deleted_package_fail_the_run(repo: pytest.Pytester) -> None:
    """syrupy never looks there: no collected test module maps to ``golden/retired/``."""
    for folder in ("alpha/test_deleted", "beta/test_gone"):
        for file in (repo.path / "golden" / folder).iterdir():
            file.unlink()

    result = repo.runpytest_subprocess("-p", "no:cacheprovider")

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*(1 orphaned)*", "golden/retired/test_m/ (1 file(s)): no packages/retired/**/test_m.py"]
    )
    assert "test_deleted" not in result.stdout.str()  # an empty folder is not in git: not reported


def test_the_golden_fixture_outside_packages_says_why(repo: pytest.Pytester) -> None:
    (repo.path / "tools" / "test_tool.py").write_text("def test_g(golden):\n    assert golden == 1\n")

    result = repo.runpytest_subprocess("-p", "no:cacheprovider", "tools")

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*test_tool.py: golden tests must live under packages/<pkg>/tests/*"])


def test_selection_by_keyword_does_not_hide_an_orphan(repo: pytest.Pytester) -> None:
    """No ``-k`` can select a deleted module, so the check does not depend on selection."""
    result = repo.runpytest_subprocess("-p", "no:cacheprovider", "packages/beta", "-k", "nothing_matches")

    assert result.ret == pytest.ExitCode.TESTS_FAILED  # not 5: the orphan is the failure
    result.stdout.fnmatch_lines(["golden/beta/test_gone/ *"])


@pytest.mark.parametrize(
    ("option", "code", "left"),
    [
        ("--snapshot-warn-unused", pytest.ExitCode.OK, ALL),
        ("--snapshot-disable-unused", pytest.ExitCode.OK, ALL),
    ],
)
def test_syrupys_unused_options_are_honoured(
    repo: pytest.Pytester, option: str, code: pytest.ExitCode, left: list[str]
) -> None:
    result = repo.runpytest_subprocess("-p", "no:cacheprovider", option)

    assert result.ret == code
    assert ("test_deleted" in result.stdout.str()) is (option == "--snapshot-warn-unused")
    assert goldens(repo) == left


def test_update_without_cleanup_keeps_them(repo: pytest.Pytester) -> None:
    result = repo.runpytest_subprocess("-p", "no:cacheprovider", "--snapshot-update", "--snapshot-no-cleanup")

    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*(3 orphaned)*"])
    assert goldens(repo) == ALL
