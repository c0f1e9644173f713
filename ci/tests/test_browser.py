"""ci/browser.py: a real browser is found, Ubuntu's snap stub never is, and the summary says which."""

from __future__ import annotations

from pathlib import Path

from ci import browser, nox_summary

SNAP_STUB = '#! /bin/sh\n# Ubuntu chromium-browser transitional wrapper\nexec /snap/bin/chromium "$@"\n'


def executable(path: Path, text: str) -> str:
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


def test_the_snap_stub_is_skipped_for_the_next_real_browser(tmp_path: Path) -> None:
    stub = executable(tmp_path / "chromium-browser", SNAP_STUB)
    real = executable(tmp_path / "google-chrome", "\x7fELF not a script")
    on_path = {"chromium-browser": stub, "google-chrome": real}
    assert browser.find_chromium({}, on_path.get) == real
    assert browser.find_chromium({}, {"chromium-browser": stub}.get) is None
    assert browser.find_chromium({"EVALJIG_CHROMIUM": "/opt/x/chrome"}, on_path.get) == "/opt/x/chrome"


def test_apt_installs_only_on_debian(tmp_path: Path) -> None:
    release = tmp_path / "os-release"
    release.write_text('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n')
    assert browser.is_debian(release)
    release.write_text('NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\n')
    assert not browser.is_debian(release)
    assert not browser.is_debian(tmp_path / "missing")


def test_the_make_ci_summary_prints_the_browser_status(tmp_path: Path) -> None:
    status = tmp_path / "browser-status.txt"
    status.write_text(f"browser: SKIPPED report.html browser tests: {browser.SKIP_REASON}\n")
    report = {"sessions": [{"name": "tests", "signatures": ["tests-3.11"], "result": "success", "duration": 3}]}
    lines = nox_summary.summary(report, tmp_path, "make ci", status)
    assert lines[-1] == f"  browser: SKIPPED report.html browser tests: {browser.SKIP_REASON}"
    coverage = tmp_path / "coverage-total.txt"
    coverage.write_text("coverage: 88.5% of branches and lines (lighteval, tests-3.11; reports/r/coverage/html)\n")
    with_coverage = {"sessions": [*report["sessions"], {"name": "coverage", "result": "success", "duration": 2}]}
    lines = nox_summary.summary(with_coverage, tmp_path, "make ci", status, coverage)
    assert lines[-1] == "  coverage: 88.5% of branches and lines (lighteval, tests-3.11; reports/r/coverage/html)"
    lint_only = {"sessions": [{"name": "lint", "result": "success", "duration": 1}]}
    assert not any("browser" in line for line in nox_summary.summary(lint_only, tmp_path, "make lint", status))
