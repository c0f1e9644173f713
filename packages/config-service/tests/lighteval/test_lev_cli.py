"""The LEV contract matrix, CLI-only cases: our config service and runners against the real lighteval 0.13.

The cases that also use the Python API live in ``test_lev_api.py``: ``nox -s lighteval`` runs
with ``--dist loadfile``, so only one worker pays for importing lighteval in-process.

The retry arithmetic these cases rely on is pinned in ``test_lev_api.py``'s docstring.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evaljig_config import (
    LightEvalConfigRenderer,
    ProviderSpec,
    RetryBudgetExhausted,
    load_provider_spec,
)
from evaljig_fixtures import LevDataset, LevTrace
from evaljig_gateway import Gateway, judge

from .conftest import EXPECTED_CONFIG, EXPECTED_STDOUT, FIXTURES, assert_no_secret

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

    assert run.stdout_table == EXPECTED_STDOUT.read_text(encoding="utf-8")
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
    assert run.stdout_table == EXPECTED_STDOUT.read_text(encoding="utf-8")  # same scores as the happy path
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
