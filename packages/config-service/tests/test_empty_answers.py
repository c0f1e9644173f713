"""Empty answers are an infrastructure error, not wrong answers: lighteval's details counted, the run refused.

lighteval 0.13 reads only ``message.content``; when it is empty it calls once more without its
cache and scores the empty answer 0, exiting 0. The LEV matrix (LEV-008) pins it on the real
lighteval; here the counting and the verdict, without lighteval.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from evaljig_config import EmptyAnswers, InfrastructureError, LightEvalRun, RetryBudgetExhausted
from evaljig_config._lighteval_runs import _finish
from evaljig_config._run_details import AnswerCounts, count_answers, read_answer_counts


def _run(answers: int | None, empty: int | None, reasoning_only: int | None, budget_empty: int = 0) -> LightEvalRun:
    return LightEvalRun(
        path="cli", run_dir=Path("run"), scores={}, stdout_table="", files=[], empty_requests=budget_empty,
        attempts_per_request=3 if budget_empty else None, last_error=None, returncode=0,
        answers=answers, empty_answers=empty, reasoning_only=reasoning_only,
    )  # fmt: skip


def test_count_answers_reads_lighteval_model_responses() -> None:
    responses: list[dict[str, Any] | None] = [
        {"text": ["B"], "reasonings": [None]},
        {"text": [""], "reasonings": ["Let me think about it."]},  # a thinking model, nothing in content
        {"text": [""], "reasonings": [None]},  # a spent retry budget: lighteval's empty response
        {"text": [" "], "reasonings": [None]},  # a blank answer is an answer (a wrong one)
        None,
    ]
    assert count_answers(responses) == AnswerCounts(answers=5, empty=3, reasoning_only=1)


def test_empty_answers_after_a_200_raise_an_infrastructure_error_naming_model_count_and_fix() -> None:
    with pytest.raises(EmptyAnswers) as caught:
        _finish(_run(answers=42, empty=42, reasoning_only=42), "openai/think-empty-gpt-stub", check=True)
    message = str(caught.value)
    assert isinstance(caught.value, InfrastructureError)
    assert not isinstance(caught.value, AssertionError)  # a reporter files it as an error, not a failure
    assert "model 'openai/think-empty-gpt-stub': 42 of 42 answer(s) came back empty" in message
    assert "infrastructure error, not wrong answers" in message
    assert "42 of them carried only reasoning" in message
    assert "fix: " in message
    assert "max_new_tokens" in message
    assert (caught.value.empty, caught.value.answers, caught.value.reasoning_only) == (42, 42, 42)


def test_a_spent_budget_keeps_its_own_error_and_is_not_counted_twice() -> None:
    with pytest.raises(RetryBudgetExhausted) as caught:
        _finish(_run(answers=4, empty=1, reasoning_only=0, budget_empty=1), "openai/m", check=True)
    assert isinstance(caught.value, InfrastructureError)
    run = _run(answers=4, empty=1, reasoning_only=0, budget_empty=1)
    assert run.empty_after_success == 0  # the one empty answer is the spent budget's
    assert _finish(run, "openai/m", check=False) is run


@pytest.mark.parametrize(("answers", "empty"), [(42, 0), (None, None)])
def test_no_empty_answer_or_no_details_passes(answers: int | None, empty: int | None) -> None:
    run = _run(answers=answers, empty=empty, reasoning_only=0)
    assert _finish(run, "openai/gpt-stub", check=True) is run


def test_read_answer_counts_reads_every_details_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The glue to lighteval's details: every ``details_*.parquet`` (pyarrow stubbed: the workspace has none)."""
    assert read_answer_counts(tmp_path) is None  # no details: nothing counted, nothing guessed
    folder = tmp_path / "details" / "openai" / "2026-01-01T00-00-00"
    folder.mkdir(parents=True)
    rows = {"details_a|0_x.parquet": [{"text": ["A"]}], "details_b|0_x.parquet": [{"text": [""], "reasonings": ["hm"]}]}
    for name in rows:
        (folder / name).write_bytes(b"PAR1")
    (folder / "results.json").write_text("{}")

    class Table:
        def __init__(self, path: Path) -> None:
            self.rows = rows[path.name]

        def column(self, name: str) -> Table:
            assert name == "model_response"
            return self

        def to_pylist(self) -> list[dict[str, Any]]:
            return self.rows

    fake = types.ModuleType("pyarrow.parquet")
    fake.read_table = lambda path, columns: Table(path)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pyarrow", types.ModuleType("pyarrow"))
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", fake)
    assert read_answer_counts(tmp_path) == AnswerCounts(answers=2, empty=1, reasoning_only=1)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # pyarrow missing: nothing counted
    assert read_answer_counts(tmp_path) is None


def test_lighteval_run_exits_1_naming_the_empty_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``evaljig-config lighteval run`` on a thinking model: exit 1, the reason on stderr (the runner stubbed)."""
    import json

    from evaljig_config import _lighteval_runs
    from evaljig_config._cli import main

    from .placeholders import FAKE_KEY, FAKE_KEY_ENV, SPEC

    def refuse(*args: object, **kwargs: object) -> LightEvalRun:
        raise EmptyAnswers("openai/think-empty-gpt-stub", 2, 2, 2)

    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_KEY)
    monkeypatch.setattr(_lighteval_runs, "run_cli", refuse)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SPEC))
    argv = ["lighteval", "run", str(spec), "t|0", "--custom-tasks", str(tmp_path / "t.py"), "--run-dir", "run"]
    assert main([*argv, "--model", "openai/think-empty-gpt-stub"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("evaljig-config: FAILED: model 'openai/think-empty-gpt-stub': 2 of 2 answer(s) came back")
    assert "infrastructure error, not wrong answers" in err[0]
