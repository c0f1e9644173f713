"""ci.yml posts ``evaljig-report comment`` on pull requests: one comment, found by its marker and updated in place.

The posting step's shell runs for real, with a fake ``gh`` on PATH that serves paged comment lists and
records what was sent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8"))
STEPS = {s.get("name"): s for s in WORKFLOW["jobs"]["ci"]["steps"]}
WRITE = STEPS["pull-request comment (evaljig-report comment)"]
POST = STEPS["post or update the pull-request comment"]

FAKE_GH = """#!{python}
import json, os, sys
state = os.environ["FAKE_GH_STATE"]
with open(state + ".calls", "a") as fh:
    fh.write(json.dumps(sys.argv[1:]) + "\\n")
if "--paginate" in sys.argv:
    for page in json.load(open(state)):
        sys.stdout.write(json.dumps(page))  # pages back to back, as gh prints them
"""


def test_the_comment_is_written_on_pull_requests_with_the_baseline_when_committed() -> None:
    assert "github.event_name == 'pull_request'" in WRITE["if"]
    assert "args=(comment --out evaljig-comment.md)" in WRITE["run"]
    assert "args+=(--baseline evaljig-baseline.json)" in WRITE["run"]
    assert '.venv/bin/evaljig-report "${args[@]}"' in WRITE["run"]
    assert "make setup" in WRITE["run"]
    assert WORKFLOW["jobs"]["ci"]["permissions"] == {"contents": "read", "pull-requests": "write"}


def write_run(root: Path, run: str, status: str) -> None:
    """A run under ``root/reports`` written by the real recorder (one case, one metric)."""
    from evaljig_report._layout import Layout
    from evaljig_report._recorder import Recorder

    recorder = Recorder(Layout(root / "reports", run, "tests", "gw0"))
    metric = {"name": "exact", "status": status, "score": float(status == "pass"), "reason": status}
    recorder.add_record({"suite": "tests/test_x.py::TestX", "case_id": "c1", "case": {}, "metric": metric})
    recorder.write_index()


@pytest.mark.parametrize("with_baseline", [False, True])
def test_the_write_step_runs_evaljig_report_comment(tmp_path: Path, with_baseline: bool) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "make").write_text("#!/bin/sh\nexit 0\n")  # the venv is this one
    (bin_dir / "make").chmod(0o755)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "evaljig-report").symlink_to(Path(sys.executable).parent / "evaljig-report")
    write_run(tmp_path, "base", "pass")
    if with_baseline:
        from evaljig_report import load_outcomes, write_baseline

        write_baseline(tmp_path / "evaljig-baseline.json", load_outcomes(tmp_path / "reports" / "base"))
    write_run(tmp_path, "zz-new", "fail")  # the newest run
    os.utime(tmp_path / "reports" / "zz-new", (2_000_000_000, 2_000_000_000))
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["bash", "-euo", "pipefail", "-c", WRITE["run"]], cwd=tmp_path, env=env, check=True)
    text = (tmp_path / "evaljig-comment.md").read_text()
    assert text.startswith("<!-- evaljig-report -->\n## evaljig: ")
    if with_baseline:
        assert "❌ 1 regressed" in text
        assert "Compared with `evaljig-baseline.json`" in text
    else:
        assert "⚠️ 1 not passing" in text


def post(tmp_path: Path, pages: list[list[dict[str, Any]]]) -> list[list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text(FAKE_GH.format(python=sys.executable))
    gh.chmod(0o755)
    state = tmp_path / "state.json"
    state.write_text(json.dumps(pages))
    (tmp_path / "evaljig-comment.md").write_text("<!-- evaljig-report -->\n## evaljig: ✅ no regressions\n")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_GH_STATE": str(state),
        "GITHUB_REPOSITORY": "team/project",
        "PR": "12",
    }
    subprocess.run(["bash", "-euo", "pipefail", "-c", POST["run"]], cwd=tmp_path, env=env, check=True)
    return [json.loads(line) for line in (tmp_path / "state.json.calls").read_text().splitlines()]


@pytest.mark.parametrize(
    ("pages", "expected"),
    [
        ([[{"id": 1, "body": "LGTM"}], [{"id": 7, "body": "<!-- evaljig-report -->\nold"}]],
         ["api", "--method", "PATCH", "repos/team/project/issues/comments/7", "-F", "body=@evaljig-comment.md"]),
        ([[{"id": 1, "body": "mentions <!-- evaljig-report --> later"}], []],
         ["api", "--method", "POST", "repos/team/project/issues/12/comments", "-F", "body=@evaljig-comment.md"]),
    ],
)  # fmt: skip
def test_the_comment_is_updated_in_place_or_posted_once(
    tmp_path: Path, pages: list[list[dict[str, Any]]], expected: list[str]
) -> None:
    calls = post(tmp_path, pages)
    assert calls == [["api", "--paginate", "repos/team/project/issues/12/comments"], expected]
