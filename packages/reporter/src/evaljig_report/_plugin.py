"""pytest plugin (``pytest11`` entry point): per-case reports for every xdist worker.

Eval tests record ``("evaljig.case", record)`` in ``item.user_properties``; each worker
folds the records of a case into ``<root>/<run>/<session>/<worker>/<case>/case.json`` as
they arrive and writes its worker index at the end; the xdist controller (or a run without
xdist) writes the session index. Before running anything each worker writes the cases it
collected (``collected.json``), and the controller records an item whose worker died as an
``error`` case, so a merge can list every case that never finished. Scheduling is xdist's
own: a ``ToolEval`` case is one item (evaljig-cases), so no ``--dist`` mode divides it, and
installing the plugin changes how nobody's tests are scheduled.
Plain tests are recorded only with ``--evaljig-all-tests``
(or ``EVALJIG_ALL_TESTS=1``), so by default a test without the contract costs no file I/O; a plain
test that attached files (a failed LEV case's debug files) is recorded regardless, so they land.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Any

import pytest

from evaljig_common import RECORD_KEY, claim_run, run_id, safe_segment
from evaljig_report._attachments import ATTACHMENT_KEY
from evaljig_report._crash import CONTROLLER_WORKER, CollectedCases, collected_cases, write_collected
from evaljig_report._layout import CASE_FILE, DEFAULT_ROOT, SOLO_WORKER, Layout, session_name
from evaljig_report._recorder import Recorder, record_attempt, record_case_key, split_nodeid, write_session_index

#: ``workerinput`` key the controller uses to hand its run id to the workers.
RUN_KEY = "evaljig_run"
_MAX_REASON = 2000
_TRUTHY = {"1", "true", "yes", "on"}
#: xdist's ``--dist loadgroup`` suffix (``nodeid@group``), never part of a test's identity in reports.
_GROUP_SUFFIX = re.compile(r"@[^/\[\]:]*$")


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


#: Markers the tool-eval proposal puts on eval classes; registered so ``--strict-markers`` accepts them.
MARKERS = (
    "evals: an eval test (tool and agent evals recorded as per-case reports)",
    "tools(tool_id=None): a tool eval, optionally naming the tool under test",
)
#: The pytest-json-report extra that points a test at its case report.
CASE_REPORT_EXTRA = "case_report"


def pytest_configure(config: pytest.Config) -> None:
    for marker in MARKERS:
        config.addinivalue_line("markers", marker)
    if config.getoption("evaljig_no_report") or os.environ.get("EVALJIG_REPORT", "").lower() in {"0", "off"}:
        return
    try:
        plugin = ReportPlugin(config)
    except ValueError as exc:  # EVALJIG_SESSION=merged: one line, not an internal error
        raise pytest.UsageError(f"evaljig-report: {exc}") from None
    config.pluginmanager.register(plugin, "evaljig-report-recorder")


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
        self._claimed = self.is_worker
        self.all_tests = bool(config.getoption("evaljig_all_tests")) or (
            os.environ.get("EVALJIG_ALL_TESTS", "").lower() in _TRUTHY
        )
        self.recorder = Recorder(self.layout)
        self._phases: dict[str, list[pytest.TestReport]] = {}
        self.session_index: Path | None = None
        self.failures: list[str] = []
        self.invocation_dir = config.invocation_params.dir
        #: Test node id -> the case.json files its records went to (for pytest-json-report's extras).
        self.case_reports: dict[str, list[Path]] = {}
        self.collected = False
        self.cases = CollectedCases(self.layout.session_dir)
        self.crashes = Recorder(dataclasses.replace(self.layout, worker=CONTROLLER_WORKER))

    def _claim(self) -> None:
        """Fix the run id once something will be written: a timestamp id gets a folder of its own."""
        if self._claimed:
            return
        self._claimed = True
        self.layout = dataclasses.replace(self.layout, run=claim_run(self.layout.root))
        self.recorder.layout = self.layout
        self.crashes.layout = dataclasses.replace(self.layout, worker=CONTROLLER_WORKER)
        self.cases = CollectedCases(self.layout.session_dir)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller: every worker writes under the controller's run id."""
        self._claim()
        node.workerinput[RUN_KEY] = self.layout.run

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        """xdist controller: the worker died while running ``crashitem``; its case becomes an error."""
        try:
            node = getattr(report, "node", None)
            worker = str(getattr(getattr(node, "gateway", None), "id", "") or "?")
            nodeid = _GROUP_SUFFIX.sub("", crashitem)
            suite, case_id, kind = self.cases.of(nodeid, worker)
            message = f"worker {worker} crashed while running {nodeid} (the case did not finish)"
            self.crashes.add_crash(suite=suite, case_id=case_id, kind=kind, nodeid=nodeid, error=message)
        except Exception as exc:
            self.failures.append(f"{crashitem}: {type(exc).__name__}: {exc}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Before any test runs (and before xdist tells the controller): the cases this process collected."""
        if self.is_controller:
            return
        try:
            cases = collected_cases(session.items, self.all_tests)
            if cases:
                self._claim()
                write_collected(self.layout, cases)
                self.collected = True
        except Exception as exc:
            self.failures.append(f"collected cases: {type(exc).__name__}: {exc}")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_controller:
            if report.when == "teardown":
                self._note_worker_case_reports(report)
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
        records = [value for key, value in report.user_properties if key == RECORD_KEY]
        attachments = [value for key, value in report.user_properties if key == ATTACHMENT_KEY]
        call = next((r for r in phases if r.when == "call"), None)
        duration = call.duration if call is not None else 0.0
        # a plain test that attached debug files (a failed LEV case) is a case of its own: its files must land
        plain = not records and (self.all_tests or bool(attachments))
        if records or plain:
            self._claim()
        nodeid = _GROUP_SUFFIX.sub("", report.nodeid)
        paths = [self.recorder.add_record(record, nodeid=nodeid, duration=duration) for record in records]
        if plain:
            paths.append(self._record_plain([*phases, report], duration))
        if attachments:  # to every case the test recorded, or to its plain case
            keys = (
                {(*record_case_key(r, nodeid), record_attempt(r)) for r in records}
                if records
                else {(*split_nodeid(nodeid), None)}
            )
            for suite, case_id, attempt in sorted(keys, key=lambda k: (k[0], k[1], k[2] or 0)):
                self.recorder.attach(suite, case_id, attachments, attempt)
        if paths:
            self.case_reports[report.nodeid] = list(dict.fromkeys(paths))

    def _note_worker_case_reports(self, report: pytest.TestReport) -> None:
        """xdist controller: where the worker that ran this test wrote its cases (same layout, that worker's folder)."""
        worker = getattr(report, "worker_id", None)
        if not isinstance(worker, str):
            return
        layout = Layout(self.layout.root, self.layout.run, self.layout.session, safe_segment(worker))
        nodeid = _GROUP_SUFFIX.sub("", report.nodeid)
        keys = [
            (*record_case_key(value, nodeid), record_attempt(value))
            for key, value in report.user_properties
            if key == RECORD_KEY
        ]
        if not keys and (self.all_tests or any(key == ATTACHMENT_KEY for key, _ in report.user_properties)):
            keys = [(*split_nodeid(nodeid), None)]
        if keys:
            paths = [layout.case_dir(suite, case_id, attempt) / CASE_FILE for suite, case_id, attempt in keys]
            self.case_reports[report.nodeid] = list(dict.fromkeys(paths))

    @pytest.hookimpl(optionalhook=True)
    def pytest_json_modifyreport(self, json_report: dict[str, Any]) -> None:
        """pytest-json-report, when installed: a recorded test's case.json path(s) as ``case_report`` extras.

        Paths are relative to the invocation directory when below it, like the reports root itself.
        """
        base = self.invocation_dir
        for test in json_report.get("tests", []):
            for path in self.case_reports.get(test.get("nodeid"), []):
                shown = path.relative_to(base).as_posix() if path.is_relative_to(base) else path.as_posix()
                extra = {"name": CASE_REPORT_EXTRA, "format": "text", "content": shown}
                test.setdefault("extras", []).append(extra)

    def _record_plain(self, phases: list[pytest.TestReport], duration: float) -> Path:
        status, reason, error = "pass", "", None
        for phase in phases:
            if phase.failed and phase.when == "call":
                status, reason = "fail", _reason(phase)
            elif phase.failed:
                status, error = "fail", f"{phase.when} failed: {_reason(phase)}"
                reason = reason or error
            elif phase.skipped and status == "pass":
                status, reason = "skip", _reason(phase)
        return self.recorder.add_plain(
            nodeid=_GROUP_SUFFIX.sub("", phases[-1].nodeid),
            status=status,
            reason=reason,
            duration=duration,
            error=error,
        )

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        try:
            if not self.is_controller:
                self.recorder.write_index(always=self.collected)
            if self.is_controller:
                self.crashes.write_index()
            if not self.is_worker and self._claimed:
                self.session_index = write_session_index(self.layout)
                if self.session_index is None:
                    _remove_empty(self.layout.session_dir, self.layout.session_dir.parent)
        except Exception as exc:
            self.failures.append(f"index: {type(exc).__name__}: {exc}")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.session_index is not None:
            terminalreporter.write_line(f"evaljig-report: session index {self.session_index}")
        for failure in self.failures:
            terminalreporter.write_line(f"evaljig-report: could not write a report: {failure}", yellow=True)


def _remove_empty(*folders: Path) -> None:
    """A run that recorded nothing leaves no folder behind (only empty folders are removed)."""
    for folder in folders:
        try:
            folder.rmdir()
        except FileNotFoundError:
            continue
        except OSError:
            return
