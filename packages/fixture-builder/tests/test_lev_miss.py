"""A LEV run that hit a cassette miss fails as the miss, and every failed LEV case leaves its debug files.

lighteval turns the gateway's 404 into an empty answer and the runner into ``RetryBudgetExhausted``
(``last error: None``): the explanation the gateway gave is what the failure must start with.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from evaljig_config import RetryBudgetExhausted, parse_provider_spec
from evaljig_fixtures import LevTrace
from evaljig_gateway import CassetteMiss, Exchange, Gateway, Replay, write_cassette

REQUEST = {"model": "acme-small", "messages": [{"role": "user", "content": "Q1?"}], "temperature": 0.0}


def _cassette(path: Path) -> Path:
    answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "A"}, "finish_reason": "stop"}]}
    exchange = Exchange(
        "POST", "/v1/chat/completions", json.dumps(REQUEST, indent=2), 200,
        (("content-type", "application/json"),), json.dumps(answer),
    )  # fmt: skip
    write_cassette(path, [exchange])
    return path


def _post(base_url: str, body: dict[str, Any]) -> int:
    request = urllib.request.Request(
        base_url + "/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_a_run_that_missed_the_cassette_fails_with_the_miss_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = parse_provider_spec(
        {"name": "acme", "base_url": "http://127.0.0.1:8000/v1", "model": "openai/acme-small", "api_key_env": "K"}
    )
    with Gateway(tape=Replay(_cassette(tmp_path / "c.yaml"))) as gw:

        def lighteval_as_it_is(spec: object, tasks: str, **kw: object) -> object:
            assert _post(gw.base_url, REQUEST) == 200
            assert _post(gw.base_url, {**REQUEST, "temperature": 0.3}) == 404
            raise RetryBudgetExhausted("acme-small", 2, "1 request(s) ended empty; last error: None")

        monkeypatch.setattr("evaljig_fixtures._lev_harness.run_cli", lighteval_as_it_is)
        trace = LevTrace(gw)
        with pytest.raises(CassetteMiss) as caught:
            trace.cli(spec, "t|0", custom_tasks=tmp_path / "t.py", run_dir=tmp_path / "run")
    first = str(caught.value).splitlines()[0]
    assert first.startswith("Cassette miss: POST /v1/chat/completions differs from the closest recording")
    assert first.endswith("temperature: 0 -> 0.3")
    assert isinstance(caught.value.__cause__, RetryBudgetExhausted)
    assert [c.status for c in trace.last_calls] == [200, 404]


INNER = """
import sys


def test_lev_broken(lev_trace, tmp_path):
    lev_trace.subprocess([sys.executable, "-c", "print('lighteval says hi')"], cwd=tmp_path)
    assert False, "the golden table differs"


def test_lev_fine(lev_trace, tmp_path):
    lev_trace.subprocess([sys.executable, "-c", "print('fine')"], cwd=tmp_path)
"""


def test_every_failed_lev_case_leaves_its_debug_files(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only with ``EVALJIG_ALL_TESTS=1``: a failed case that used ``lev_trace`` is reported with its files."""
    for name in ("EVALJIG_ALL_TESTS", "EVALJIG_REPORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("EVALJIG_REPORT_DIR", str(pytester.path / "reports"))
    monkeypatch.setenv("EVALJIG_RUN", "r1")
    pytester.makepyfile(test_inner=INNER)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    cases = [json.loads(p.read_text()) for p in (pytester.path / "reports").rglob("case.json")]
    assert [doc["source"]["case_id"] for doc in cases] == ["test_lev_broken"]  # a passing plain test costs nothing
    assert "run1-subprocess-stdout-tail.txt" in {a["name"] for a in cases[0]["artifacts"]}


WARNING_TESTS = """
import warnings


def _third_party():
    warnings.warn("Deprecated argument(s) used in 'list_models': model_name.", FutureWarning)
    warnings.warn("Item 'index' on TypedDict class 'X' is using the `ReadOnly` qualifier.", UserWarning)


def test_a_lev_case(lev_trace):
    _third_party()


def test_any_other_test():
    _third_party()
"""


def test_lighteval_s_own_warnings_are_hidden_in_lev_cases_only(pytester: pytest.Pytester) -> None:
    """lighteval 0.13 and litellm warn from their own code in every in-process LEV run; a team cannot act on it."""
    pytester.makeini("[pytest]\n")  # its own rootdir: not evaljig's pyproject, which filters these two as well
    pytester.makepyfile(test_inner=WARNING_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=2, warnings=2)
    summary = result.stdout.str().split("warnings summary", 1)[1]
    assert "test_any_other_test" in summary
    assert "test_a_lev_case" not in summary
