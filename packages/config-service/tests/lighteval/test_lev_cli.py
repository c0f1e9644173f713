"""The LEV contract matrix, CLI-only cases: our config service and runners against the real lighteval 0.13.

The cases that also use the Python API live in ``test_lev_api.py``: ``nox -s lighteval`` runs
with ``--dist load``, every case here going to whichever worker is free, while the conftest keeps
``test_lev_api.py``'s cases on one worker, so lighteval's in-process import (~13 s of CPU) is paid once.

The retry arithmetic these cases rely on is pinned in ``test_lev_api.py``'s docstring.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evaljig_config import (
    EmptyAnswers,
    InfrastructureError,
    LightEvalConfigRenderer,
    ProviderSpec,
    RetryBudgetExhausted,
    load_provider_spec,
)
from evaljig_config._lighteval_drift import SENT_AS
from evaljig_config._run_result import read_scores
from evaljig_fixtures import LevDataset, LevTrace, assert_golden_file
from evaljig_gateway import Gateway, judge

from .conftest import EXPECTED_CONFIG, EXPECTED_STDOUT, FIXTURES, REBUILD_STDOUT, assert_no_secret

pytestmark = pytest.mark.lighteval


def test_lev_001_cli_happy_path(
    lev_provider: ProviderSpec,
    gateway: Gateway,
    mini_mmlu: LevDataset,
    tmp_path: Path,
    lev: object,
    lev_trace: LevTrace,
) -> None:
    committed = load_provider_spec(FIXTURES / "providers" / "fake-openai.json")
    assert LightEvalConfigRenderer(committed).render_yaml() == EXPECTED_CONFIG.read_text(encoding="utf-8")
    gateway.set_answers(mini_mmlu.answer_key)

    run = lev_trace.cli(lev_provider, mini_mmlu.task, custom_tasks=mini_mmlu.module, run_dir=tmp_path / "run")

    assert_golden_file(run.stdout_table, EXPECTED_STDOUT, rebuild=REBUILD_STDOUT)
    assert 0 < run.scores[mini_mmlu.task]["em"] < 1
    calls = gateway.calls()
    assert len(calls) == mini_mmlu.rows  # exactly one call per sample: no retries, no cache
    assert [c.status for c in calls] == [200] * mini_mmlu.rows
    assert [c.attempt for c in calls] == list(range(1, mini_mmlu.rows + 1))  # the gateway's per-model count
    assert_no_secret(run.run_dir)
    lev("LEV-001", calls=len(calls), em=run.scores[mini_mmlu.task]["em"])  # type: ignore[operator]


def test_lev_002_cli_retry_path(
    lev_provider: ProviderSpec,
    gateway: Gateway,
    mini_mmlu: LevDataset,
    tmp_path: Path,
    lev: object,
    lev_trace: LevTrace,
) -> None:
    gateway.set_answers(mini_mmlu.answer_key)
    flaky = lev_provider.with_model("openai/fail-once-gpt-stub")

    run = lev_trace.cli(flaky, mini_mmlu.task, custom_tasks=mini_mmlu.module, run_dir=tmp_path / "run")

    statuses = [c.status for c in gateway.calls()]
    assert statuses == [500] + [200] * mini_mmlu.rows  # the one failure is retried by the SDK
    # the verdict on the CLI subprocess's own traffic: the SDK retried the 500 after the 1 ms its
    # retry-after-ms asked for, within the cap, and nothing else was retried (docs/lev-matrix.md)
    verdict = judge(gateway)
    assert (verdict.requests, verdict.attempts, verdict.findings) == (mini_mmlu.rows, len(statuses), ()), (
        verdict.render()
    )
    assert run.empty_requests == 0
    # same scores as the happy path
    assert_golden_file(run.stdout_table, EXPECTED_STDOUT, rebuild=REBUILD_STDOUT)
    lev("LEV-002", calls=len(statuses), failures=statuses.count(500))  # type: ignore[operator]


def test_lev_007_cli_retries_a_400(
    lev_provider: ProviderSpec,
    gateway: Gateway,
    mini_mmlu: LevDataset,
    tmp_path: Path,
    lev: object,
    lev_trace: LevTrace,
) -> None:
    """The verdict on lighteval's CLI against a model that answers 400: lighteval's loop catches
    ``litellm.BadRequestError`` and tries again without sleeping (only its generic ``except`` sleeps),
    so a request no retry can fix is sent ``api_max_retry`` times. The OpenAI SDK itself retries no 400."""
    rejecting = lev_provider.with_model("openai/bad-request-gpt-stub")

    with pytest.raises(RetryBudgetExhausted) as caught:
        lev_trace.cli(rejecting, mini_mmlu.task, custom_tasks=mini_mmlu.module, run_dir=tmp_path / "run", max_samples=1)

    calls = gateway.calls()
    attempts = rejecting.retry.attempts
    assert caught.value.attempts == attempts
    assert [c.status for c in calls] == [400] * attempts  # lighteval's loop, one SDK call per attempt
    assert len({c.raw_body for c in calls}) == 1  # the same request each time
    # no_backoff is left out: lighteval does not sleep here, but how long litellm takes between two
    # attempts is the machine's timing, so whether the waits read "no delay" is not pinned
    verdict = judge(calls, checks=["retry_after_ignored", "retried_non_retryable", "retry_storm"])
    assert [(f.check, [a.seq for a in f.calls]) for f in verdict.findings] == [("retried_non_retryable", [1, 2])]
    assert (verdict.requests, verdict.attempts) == (1, attempts)
    lev("LEV-007", calls=len(calls), findings=len(verdict.findings))  # type: ignore[operator]


def test_lev_008_cli_think_empty_is_an_infrastructure_error(
    lev_provider: ProviderSpec,
    gateway: Gateway,
    mini_mmlu: LevDataset,
    tmp_path: Path,
    lev: object,
    lev_trace: LevTrace,
) -> None:
    """A thinking model that leaves ``content`` empty: lighteval asks again without its cache, scores
    the empty answer 0 and exits 0; evaljig reads lighteval's details and refuses the run."""
    gateway.set_answers(mini_mmlu.answer_key)
    thinking = lev_provider.with_model("openai/think-empty-gpt-stub")

    with pytest.raises(EmptyAnswers) as caught:
        lev_trace.cli(thinking, mini_mmlu.task, custom_tasks=mini_mmlu.module, run_dir=tmp_path / "run")

    calls = gateway.calls()
    assert [c.status for c in calls] == [200] * (2 * mini_mmlu.rows)  # lighteval's second, uncached call
    assert [c.raw_body for c in calls[0::2]] == [c.raw_body for c in calls[1::2]]  # the same request, twice
    assert len({c.raw_body for c in calls}) == mini_mmlu.rows
    em = read_scores(tmp_path / "run" / "out")[mini_mmlu.task]["em"]
    assert em == 0.0  # every empty answer scored as a wrong one, by lighteval
    error = caught.value
    assert isinstance(error, InfrastructureError)
    assert (error.empty, error.answers, error.reasoning_only) == (mini_mmlu.rows,) * 3
    assert f"model 'openai/think-empty-gpt-stub': {mini_mmlu.rows} of {mini_mmlu.rows} answer(s)" in str(error)
    # the verdict: a repeat after a 200 is not a retry (only a failure opens one), so each call is its
    # own logical request and nothing is found — the empty answers are evaljig's flag, not the verdict's
    verdict = judge(calls)
    assert (verdict.requests, verdict.attempts, verdict.findings) == (len(calls), len(calls), ()), verdict.render()
    lev("LEV-008", calls=len(calls), em=em, empty=error.empty, flag=type(error).__name__)  # type: ignore[operator]


CONTEXT_TOKENS = 45  # mini-mmlu's prompts are 39..63 tokens for the gateway: half of them are over


def test_lev_009_cli_context_overflow(
    lev_provider: ProviderSpec,
    gateway: Gateway,
    mini_mmlu: LevDataset,
    tmp_path: Path,
    lev: object,
    lev_trace: LevTrace,
) -> None:
    """A prompt over the context answers 400 ``context_length_exceeded``: lighteval retries it silently
    (its ``BadRequestError`` branch logs nothing), records an empty answer, scores it 0 and exits 0."""
    gateway.set_answers(mini_mmlu.answer_key)
    short = lev_provider.with_model(f"openai/context-{CONTEXT_TOKENS}-gpt-stub")

    with pytest.raises(RetryBudgetExhausted) as caught:
        lev_trace.cli(short, mini_mmlu.task, custom_tasks=mini_mmlu.module, run_dir=tmp_path / "run")

    calls = gateway.calls()
    by_prompt: dict[bytes, list[int]] = {}
    for call in calls:
        by_prompt.setdefault(call.raw_body, []).append(call.status)
    over = [p for p, statuses in by_prompt.items() if statuses == [400] * short.retry.attempts]
    answered = [p for p, statuses in by_prompt.items() if statuses == [200]]
    assert len(over) + len(answered) == len(by_prompt) == mini_mmlu.rows  # nothing else: no SDK retry of a 400
    assert (len(over), len(answered)) == (21, 21)
    assert len(calls) == 21 * short.retry.attempts + 21
    em = read_scores(tmp_path / "run" / "out")[mini_mmlu.task]["em"]
    assert em == 14 / mini_mmlu.rows  # the 21 answered prompts score as before; the 21 over score 0
    error = caught.value
    assert isinstance(error, InfrastructureError)
    assert "21 request(s) ended empty" in str(error)
    # lighteval logged no error: the harness names what the gateway answered
    assert f"the gateway answered {21 * short.retry.attempts} x 400 context_length_exceeded" in str(error)
    verdict = judge(calls, checks=["retry_after_ignored", "retried_non_retryable", "retry_storm"])
    assert (verdict.requests, verdict.attempts) == (mini_mmlu.rows, len(calls))
    assert {f.check for f in verdict.findings} == {"retried_non_retryable"}
    assert len(verdict.findings) == len(over)  # one per prompt over the context, naming its first two calls
    assert all(len(f.calls) == 2 for f in verdict.findings)
    lev(  # type: ignore[operator]
        "LEV-009", calls=len(calls), over=len(over), em=round(em, 4), findings=len(verdict.findings),
        flag=type(error).__name__,
    )  # fmt: skip


def _sent(call_body: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in call_body.items() if k != "messages"}


@pytest.mark.parametrize(
    ("model", "rules", "sent"),
    [
        # OpenAI's o1: litellm says it reasons (x10) and the name has 'o1' (no generation parameter);
        # litellm's o-series mapping then sends max_completion_tokens alone and drops logprobs
        (
            "openai/o1",
            ["reasoning", "o1"],
            {"model": "o1", "max_completion_tokens": 80, "n": 1, "response_format": {"type": "text"}, "stop": ["\n"]},
        ),
        # any alias with 'o1' in it loses temperature and seed: lighteval tests a substring
        (
            "openai/gpt-stub-o1",
            ["o1"],
            {
                "model": "gpt-stub-o1", "logprobs": False, "max_completion_tokens": 8, "max_tokens": 8, "n": 1,
                "response_format": {"type": "text"}, "stop": ["\n"],
            },
        ),
    ],
)  # fmt: skip
def test_lev_011_cli_reasoning_model_names(
    lev_provider: ProviderSpec,
    gateway: Gateway,
    mini_mmlu: LevDataset,
    tmp_path: Path,
    lev: object,
    lev_trace: LevTrace,
    model: str,
    rules: list[str],
    sent: dict[str, object],
) -> None:
    """What lighteval actually sends for a reasoning model name, against the rendered config, and the
    config service's warnings about it (docs/lev-matrix.md)."""
    gateway.set_answers(mini_mmlu.answer_key)
    spec = lev_provider.with_model(model)
    drift = LightEvalConfigRenderer(spec).drift()
    assert [d.rule for d in drift] == rules

    lev_trace.cli(spec, mini_mmlu.task, custom_tasks=mini_mmlu.module, run_dir=tmp_path / "run", max_samples=2)

    calls = gateway.calls()
    assert [c.status for c in calls] == [200, 200]
    assert [_sent(c.body) for c in calls] == [sent, sent]
    rendered = LightEvalConfigRenderer(spec).model_parameters()["generation_parameters"]
    assert rendered == {"temperature": 0.0, "max_new_tokens": 8, "seed": 0}
    (o1,) = [d for d in drift if d.rule == "o1"]
    assert {"temperature", "seed"} <= set(o1.parameters)
    dropped = {SENT_AS[name] for name in o1.parameters if name != "max_new_tokens"}  # that one: the task's size
    assert not dropped & set(sent)  # every parameter the warning names as dropped is absent from the wire
    verdict = judge(calls)
    assert (verdict.requests, verdict.attempts, verdict.findings) == (2, 2, ()), verdict.render()
    lev(f"LEV-011 {model}", max_completion_tokens=sent["max_completion_tokens"], rules="+".join(rules))  # type: ignore[operator]
