"""A failing LEV case leaves what is needed to debug it from CI artifacts, with the api key scrubbed.

The inner session is a project of its own that uses only the installed plugins (evaljig-fixtures'
LEV harness, the gateway, the runners and the reporter), as a team's would; only the
``lighteval`` executable is a stand-in (a boundary we do not own, and not installed here): it
calls the gateway once, prints a results table and, like a careless tool, echoes the api key.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from evaljig_report import schema_errors

from .conftest import FIXTURES, PROVIDER, assert_no_secret

FAKE_LIGHTEVAL = """#!{python}
import json, os, sys, urllib.request, yaml
config = yaml.safe_load(open(sys.argv[3]))["model_parameters"]
key = os.environ["OPENAI_API_KEY"]
body = {{"model": config["model_name"].removeprefix("openai/"), "messages": [{{"role": "user", "content": "Q?"}}]}}
request = urllib.request.Request(config["base_url"] + "/chat/completions", json.dumps(body).encode(),
                                 {{"Content-Type": "application/json", "Authorization": "Bearer " + key}})
urllib.request.urlopen(request).read()
print("banner: using key", key)
print("|Task|Metric|Value|")
print("|----|------|----:|")
print("|mini|em    |0.5  |")
print("lighteval log: Error in API call with key", key, file=sys.stderr)
"""

INNER_TESTS = """
import json, os, sys, urllib.request


def run(lev_provider, lev_trace, tmp_path):
    tasks = tmp_path / "tasks.py"
    tasks.write_text("# custom tasks")
    return lev_trace.cli(lev_provider, "mini|0", custom_tasks=tasks, run_dir=tmp_path / "run")


def test_lev_broken(lev_provider, lev_trace, tmp_path):
    result = run(lev_provider, lev_trace, tmp_path)
    echo = "import os; print('key=' + os.environ['EVALJIG_FAKE_API_KEY'])"
    lev_trace.subprocess([sys.executable, "-c", echo], cwd=tmp_path)
    print("the test printed", os.environ["EVALJIG_FAKE_API_KEY"])
    assert result.stdout_table == "| the golden table |\\n"


def test_lev_fine(lev_provider, lev_trace, tmp_path, lev):
    assert run(lev_provider, lev_trace, tmp_path).stdout_table.startswith("|Task|")
    assert [(c.model, c.status) for c in lev_trace.last_calls] == [("gpt-stub", 200)]
    lev("LEV-900", calls=len(lev_trace.last_calls))


def test_answers_from_the_dataset(lev_dataset, lev_gateway):
    question = next(iter(lev_dataset.answer_key))
    body = {"model": "gpt-stub", "messages": [{"role": "user", "content": question + "\\nAnswer:"}]}
    request = urllib.request.Request(lev_gateway.base_url + "/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    reply = json.load(urllib.request.urlopen(request))
    assert reply["choices"][0]["message"]["content"] == lev_dataset.answer_key[question]
    assert lev_dataset.module.is_file() and lev_dataset.rows == len(lev_dataset.answer_key)


def test_unrelated_failure(gateway):
    print("no LEV fixture here:", os.environ.get("EVALJIG_FAKE_API_KEY"))
    assert False
"""

INI = """[pytest]
lev_provider = {spec}
lev_dataset = {dataset}
"""


@pytest.fixture
def lev_project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A project of its own using only the installed plugin: its ini names the provider and dataset."""
    if Path(sys.executable).with_name("lighteval").exists():
        pytest.skip("the real lighteval is installed next to this interpreter and would be run instead")
    bin_dir = pytester.path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "lighteval"
    script.write_text(FAKE_LIGHTEVAL.format(python=sys.executable), encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    stand_in = pytester.path / "site" / "lighteval"  # the runners prepare the installed package before a run
    (stand_in / "tasks" / "tasks").mkdir(parents=True)
    (stand_in / "__init__.py").write_text('"""A stand-in: only its folder is used."""\n', encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(stand_in.parent))
    for name, value in {"EVALJIG_ALL_TESTS": "1", "EVALJIG_RUN": "r1", "EVALJIG_SESSION": "lighteval"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("EVALJIG_REPORT_DIR", str(pytester.path / "reports"))
    monkeypatch.delenv("EVALJIG_REPORT", raising=False)
    monkeypatch.delenv("EVALJIG_FAKE_API_KEY", raising=False)
    dataset = FIXTURES / "datasets" / "mini-mmlu.eval752.zip"
    pytester.makefile(".ini", pytest=INI.format(spec=PROVIDER, dataset=dataset))
    pytester.makepyfile(test_inner=INNER_TESTS)
    return pytester


def case_doc(reports: Path, case_id: str) -> tuple[dict[str, Any], Path]:
    found = [(json.loads(p.read_text()), p.parent) for p in reports.rglob("case.json")]
    (match,) = [(doc, folder) for doc, folder in found if doc["source"]["case_id"] == case_id]
    return match


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["solo", "xdist"])
def test_a_failed_lev_case_carries_config_argv_tails_and_journal_without_the_key(
    lev_project: pytest.Pytester, xdist: list[str]
) -> None:
    result = lev_project.runpytest_subprocess("-p", "no:cacheprovider", *xdist)
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*= LEV matrix =*", "LEV-900  PASSED *calls=1"])

    doc, folder = case_doc(lev_project.path / "reports", "test_lev_broken")
    assert schema_errors(doc) == []
    assert doc["status"] == "fail"
    written = {a["name"]: folder / a["file"] for a in doc["artifacts"] if a["status"] == "written"}
    assert sorted(written) == [
        "argv.txt",
        "gateway-journal.jsonl",
        "pytest-captured-tail.txt",
        "run1-cli-config.yaml",
        "run1-cli-stderr-tail.txt",
        "run1-cli-stdout-tail.txt",
        "run2-subprocess-stderr-tail.txt",
        "run2-subprocess-stdout-tail.txt",
    ]
    assert len(doc["artifacts"]) == len(written)
    text = {name: path.read_text(encoding="utf-8") for name, path in written.items()}
    assert "model_name: openai/gpt-stub" in text["run1-cli-config.yaml"]
    assert "api_max_retry: 3" in text["run1-cli-config.yaml"]
    assert text["argv.txt"].startswith("#1 cli: lighteval endpoint litellm ")
    assert "--custom-tasks" in text["argv.txt"]
    assert "#2 subprocess: " in text["argv.txt"]
    assert "|mini|em    |0.5  |" in text["run1-cli-stdout-tail.txt"]
    assert "lighteval log: Error in API call" in text["run1-cli-stderr-tail.txt"]
    assert text["run2-subprocess-stdout-tail.txt"] == "key=***\n"  # scrubbed by the hook, not by the runner
    assert "the test printed ***" in text["pytest-captured-tail.txt"]
    (call,) = [json.loads(line) for line in text["gateway-journal.jsonl"].splitlines()]
    assert (call["model"], call["status"], call["path"]) == ("gpt-stub", 200, "/v1/chat/completions")
    assert_no_secret(lev_project.path / "reports")

    fine, _ = case_doc(lev_project.path / "reports", "test_lev_fine")
    assert (fine["status"], fine["artifacts"]) == ("pass", [])  # a passing case carries nothing extra
    unrelated, _ = case_doc(lev_project.path / "reports", "test_unrelated_failure")
    assert (unrelated["status"], unrelated["artifacts"]) == ("fail", [])  # no LEV fixture, nothing attached
