"""Fixtures of the reporter tests: a clean environment, and cases written by the real recorder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evaljig_report._layout import Layout
from evaljig_report._recorder import Recorder

from .report_samples import Populate


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports of these tests (and of pytester runs) must never land in the real reports/."""
    for name in ("EVALJIG_RUN", "EVALJIG_SESSION", "EVALJIG_REPORT_DIR", "EVALJIG_ALL_TESTS", "EVALJIG_REPORT"):
        monkeypatch.delenv(name, raising=False)
    for name in ("GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def populate(tmp_path: Path) -> Populate:
    """Write cases for (run, session, worker) with the real recorder; returns the run folder."""

    def write(
        root: Path | None = None,
        *,
        run: str = "run1",
        session: str = "tests",
        worker: str = "gw0",
        records: list[dict[str, Any]],
    ) -> Path:
        layout = Layout(root or tmp_path / "reports", run, session, worker)
        recorder = Recorder(layout)
        for record in records:
            recorder.add_record(record, nodeid=f"{record['suite']}::test_{record['metric']['name']}", duration=0.5)
        recorder.write_index()
        return layout.root / run

    return write
