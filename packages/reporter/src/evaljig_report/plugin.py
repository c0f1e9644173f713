"""pytest plugin (``pytest11`` entry point): per-case reports for every xdist worker.

Eval tests record ``("evaljig.case", record)`` in ``item.user_properties``; each worker
folds the records of a case into ``<root>/<run>/<session>/<worker>/<case>/case.json`` as
they arrive and writes its worker index at the end; the xdist controller (or a run without
xdist) writes the session index. Plain tests are recorded only with ``--evaljig-all-tests``
(or ``EVALJIG_ALL_TESTS=1``), so by default a test without the contract costs no file I/O.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from evaljig_report.attachments import ATTACHMENT_KEY
from evaljig_report.layout import DEFAULT_ROOT, SOLO_WORKER, Layout, run_id, safe_segment, session_name
from evaljig_report.recorder import PROPERTY_KEY, Recorder, case_key, split_nodeid, write_session_index

#: ``workerinput`` key the controller uses to hand its run id to the workers.
RUN_KEY = "evaljig_run"
_MAX_REASON = 2000
_TRUTHY = {"1", "true", "yes", "on"}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("evaljig-report", "evaljig per-case reports")
    group.addoption(
        "--evaljig-report-dir",
        metavar="DIR",
        default=None,
        help="reports root (default: $EVALJIG_REPORT_DIR, else reports/ in the invocation directory)",
    )
    group.addoption(
        "--evaljig-all-tests",
        action="store_true",
        default=False,
        help="also record tests without the evaljig.case contract, as a case with metric 'pytest' "
        "(default: off unless $EVALJIG_ALL_TESTS=1)",
    )
    group.addoption("--evaljig-no-report", action="store_true", default=False, help="write no evaljig reports")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("evaljig_no_report") or os.environ.get("EVALJIG_REPORT", "").lower() in {"0", "off"}:
        return
    config.pluginmanager.register(ReportPlugin(config), "evaljig-report-recorder")


def _xdist_controller(config: pytest.Config) -> bool:
    """Distributing to workers, as xdist decides it: ``--dist`` alone (no ``-n``/``--tx``) runs tests here."""
    option = config.option
    return (
        not hasattr(config, "workerinput")
        and getattr(option, "dist", "no") != "no"
        and bool(getattr(option, "tx", None))
    )


def _reason(report: pytest.TestReport) -> str:
    """The one-line why of a failed or skipped phase."""
    if hasattr(report, "wasxfail"):
        return f"xfail: {report.wasxfail}".rstrip(": ")
    longrepr: Any = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(longrepr, "reprcrash", None)
    text = crash.message if crash is not None else report.longreprtext
    return str(text)[:_MAX_REASON]


class ReportPlugin:
    """The per-process recorder; registered only when reporting is on."""

    def __init__(self, config: pytest.Config) -> None:
        workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
        self.is_worker = workerinput is not None
        self.is_controller = _xdist_controller(config)
        root = Path(config.getoption("evaljig_report_dir") or os.environ.get("EVALJIG_REPORT_DIR") or DEFAULT_ROOT)
        if not root.is_absolute():
            root = config.invocation_params.dir / root
        run = str(workerinput.get(RUN_KEY) or run_id()) if workerinput else run_id()
        worker = safe_segment(str(workerinput.get("workerid", SOLO_WORKER))) if workerinput else SOLO_WORKER
        self.layout = Layout(root, run, session_name(), worker)
        self.all_tests = bool(config.getoption("evaljig_all_tests")) or (
            os.environ.get("EVALJIG_ALL_TESTS", "").lower() in _TRUTHY
        )
        self.recorder = Recorder(self.layout)
        self._phases: dict[str, list[pytest.TestReport]] = {}
        self.session_index: Path | None = None
        self.failures: list[str] = []

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller: every worker writes under the controller's run id."""
        node.workerinput[RUN_KEY] = self.layout.run

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_controller:
            return
        try:
            self._logreport(report)
        except Exception as exc:  # a report that cannot be written must not end the test session
            self.failures.append(f"{report.nodeid}: {type(exc).__name__}: {exc}")

    def _logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            if report.when == "call" or self.all_tests:
                self._phases.setdefault(report.nodeid, []).append(report)
            return
        phases = self._phases.pop(report.nodeid, [])
        records = [value for key, value in report.user_properties if key == PROPERTY_KEY]
        call = next((r for r in phases if r.when == "call"), None)
        duration = call.duration if call is not None else 0.0
        for record in records:
            self.recorder.add_record(record, nodeid=report.nodeid, duration=duration)
        if not records and self.all_tests:
            self._record_plain([*phases, report], duration)
        attachments = [value for key, value in report.user_properties if key == ATTACHMENT_KEY]
        if attachments:  # to every case the test recorded, or to its plain case
            keys = {case_key(r, report.nodeid) for r in records} if records else {split_nodeid(report.nodeid)}
            for suite, case_id in sorted(keys):
                self.recorder.attach(suite, case_id, attachments)

    def _record_plain(self, phases: list[pytest.TestReport], duration: float) -> None:
        status, reason, error = "pass", "", None
        for phase in phases:
            if phase.failed and phase.when == "call":
                status, reason = "fail", _reason(phase)
            elif phase.failed:
                status, error = "fail", f"{phase.when} failed: {_reason(phase)}"
                reason = reason or error
            elif phase.skipped and status == "pass":
                status, reason = "skip", _reason(phase)
        self.recorder.add_plain(nodeid=phases[-1].nodeid, status=status, reason=reason, duration=duration, error=error)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        try:
            if not self.is_controller:
                self.recorder.write_index()
            if not self.is_worker:
                self.session_index = write_session_index(self.layout)
        except Exception as exc:
            self.failures.append(f"index: {type(exc).__name__}: {exc}")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.session_index is not None:
            terminalreporter.write_line(f"evaljig-report: session index {self.session_index}")
        for failure in self.failures:
            terminalreporter.write_line(f"evaljig-report: could not write a report: {failure}", yellow=True)
