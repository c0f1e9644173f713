"""The LEV contract matrix, cases that use lighteval's Python API (in the worker) — see ``test_lev_cli.py``.

Retry arithmetic pinned here (lighteval 0.13.0, litellm 1.106.2, openai 2.54.0):

* lighteval makes up to ``api_max_retry`` attempts per request (``retry.attempts`` in the
  provider spec; 3 in ``fixtures/providers/fake-openai.json``), sleeping
  ``api_retry_sleep * api_retry_multiplier**i`` after each failure, the last one included.
* each attempt is one ``litellm.completion``; litellm gives the OpenAI SDK
  ``max_retries=2`` (litellm/llms/openai/openai.py), so one attempt is up to **3** HTTP calls
  for 5xx/429/connection errors. The CLI offers no way to change that.
* so a model that always fails costs ``attempts x 3`` calls per sample — **9** here — and a
  ``fail-once`` model costs exactly **one** extra call in the whole run: the SDK's first
  retry succeeds inside lighteval's first attempt, and lighteval logs nothing.
* a ``fail-3`` model outlasts the SDK: its first lighteval attempt spends all 3 calls on 500s,
  lighteval logs "Error in API call ... retry 1/3", sleeps, and its second attempt succeeds —
  the only case where recovery goes through lighteval's own ``api_max_retry`` loop.
* lighteval then scores the empty answer 0 and exits 0; the runners read its
  "API call failed after N attempts" log line and raise ``RetryBudgetExhausted``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import litellm
import pytest
import vcr

from evaljig_config import (
    EmptyAnswers,
    LightEvalConfigRenderer,
    ProviderSpec,
    RetryBudgetExhausted,
    load_provider_spec,
    run_cli,
    run_python,
)
from evaljig_config._run_result import read_scores
from evaljig_fixtures import (
    CANONICAL_BASE_URL,
    Builder,
    LevDataset,
    LevTrace,
    assert_golden_file,
    cassette_builder,
    regen_main,
    write_output,
)
from evaljig_gateway import Gateway, Replay, judge
from testkit.own_fixtures import build_script

from .conftest import (
    EXPECTED_CONFIG,
    EXPECTED_STDOUT,
    FIXTURES,
    REBUILD_STDOUT,
    ROOT,
    SDK_CALLS_PER_ATTEMPT,
    assert_no_secret,
    lighteval_cli_unmeasured,
)
from .independent_upstream import independent_upstream

pytestmark = pytest.mark.lighteval


def test_lev_003_python_api_failure(
    lev_provider: ProviderSpec,
    gateway: Gateway,
    mini_mmlu: LevDataset,
    tmp_path: Path,
    lev: object,
    lev_trace: LevTrace,
) -> None:
    broken = lev_provider.with_model("openai/always-fail")
    attempts = broken.retry.attempts
    cache_before = litellm.cache

    started = time.perf_counter()  # reported in the summary, never asserted
    with pytest.raises(RetryBudgetExhausted) as caught:
        lev_trace.python(broken, mini_mmlu.task, custom_tasks=mini_mmlu.module, run_dir=tmp_path / "py", max_samples=1)

    assert litellm.cache is cache_before  # the run's disk cache does not outlive it
    assert caught.value.attempts == attempts
    assert caught.value.model == "openai/always-fail"
    assert "InternalServerError" in caught.value.last_error
    python_seconds = time.perf_counter() - started
    python_calls = len(gateway.calls())
    assert python_calls == attempts * SDK_CALLS_PER_ATTEMPT  # 3 x 3 = 9 for one sample
    assert_no_secret(tmp_path / "py")

    gateway.reset()
    started = time.perf_counter()
    cli = lev_trace.subprocess(
        [str(Path(sys.executable).with_name("evaljig-config")), "lighteval", "run",
         str(FIXTURES / "providers" / "fake-openai.json"), mini_mmlu.task,
         "--custom-tasks", str(mini_mmlu.module), "--run-dir", str(tmp_path / "cli"),
         "--base-url", gateway.base_url, "--model", "openai/always-fail", "--max-samples", "1"],
        cwd=ROOT,
    )  # fmt: skip
    cli_seconds = time.perf_counter() - started
    assert cli.returncode == 1, cli.stderr
    assert "retry budget of 3 attempt(s) exhausted" in cli.stderr
    assert len(gateway.calls()) == attempts * SDK_CALLS_PER_ATTEMPT
    lev(  # type: ignore[operator]
        "LEV-003", python_calls=python_calls, cli_exit=cli.returncode,
        python_s=round(python_seconds, 1), cli_s=round(cli_seconds, 1),
    )  # fmt: skip


def test_lev_004_config_drift_guard(
    lev_provider: ProviderSpec, lev: object, lev_trace: LevTrace, monkeypatch: pytest.MonkeyPatch
) -> None:
    committed = load_provider_spec(FIXTURES / "providers" / "fake-openai.json")
    assert LightEvalConfigRenderer(committed).render_yaml() == EXPECTED_CONFIG.read_text(encoding="utf-8")
    monkeypatch.chdir(ROOT)
    # `make regen-check` (evaljig's build script, --check) in this worker, every builder but the CLI golden's:
    # LEV-001 runs that same lighteval run and compares its table with the golden, so it is not run twice
    script = build_script()
    code, out, err = lev_trace.in_process(
        "regen", lambda argv: regen_main(script.BUILDERS, argv, fixtures=script.FIXTURES), ["--check", "--no-lighteval"]
    )
    assert code == 0, out + err
    assert "skipped  cli-stdout-golden: --no-lighteval" in out  # named as skipped, its committed file left alone
    lev("LEV-004", regen_check="clean")  # type: ignore[operator]


def test_lev_005_multilingual_contract(
    lev_provider: ProviderSpec, gateway: Gateway, polyglot: LevDataset, tmp_path: Path, lev: object, lev_trace: LevTrace
) -> None:
    gateway.set_answers(polyglot.answer_key)
    cli = lev_trace.cli(lev_provider, polyglot.task, custom_tasks=polyglot.module, run_dir=tmp_path / "cli")
    cli_bodies = [c.raw_body for c in gateway.calls()]
    gateway.reset()
    py = lev_trace.python(lev_provider, polyglot.task, custom_tasks=polyglot.module, run_dir=tmp_path / "py")
    py_bodies = [c.raw_body for c in gateway.calls()]

    assert len(cli_bodies) == polyglot.rows
    assert cli_bodies == py_bodies  # byte-identical requests, in the same order
    assert cli.scores == py.scores
    assert cli.stdout_table == py.stdout_table
    assert 0 < cli.scores[polyglot.task]["em"] < 1
    lev("LEV-005", requests=len(cli_bodies), em=cli.scores[polyglot.task]["em"])  # type: ignore[operator]


FAILURES_BEYOND_SDK = SDK_CALLS_PER_ATTEMPT  # fail-3: every call of lighteval's first attempt answers 500


def test_lev_006_lighteval_retry_loop(
    lev_provider: ProviderSpec,
    gateway: Gateway,
    mini_mmlu: LevDataset,
    tmp_path: Path,
    lev: object,
    lev_trace: LevTrace,
) -> None:
    gateway.set_answers(mini_mmlu.answer_key)
    model = f"openai/fail-{FAILURES_BEYOND_SDK}-gpt-stub"
    flaky = lev_provider.with_model(model)
    # the Python path: the CLI runs the same lighteval loop (LEV-002/003 pin the CLI's retries), at ~13 s of imports
    run = lev_trace.python(flaky, mini_mmlu.task, custom_tasks=mini_mmlu.module, run_dir=tmp_path / "run")

    calls = gateway.calls()
    statuses = [c.status for c in calls]
    assert statuses == [500] * FAILURES_BEYOND_SDK + [200] * mini_mmlu.rows  # one lighteval attempt = 3 calls
    assert [c.attempt for c in calls] == list(range(1, FAILURES_BEYOND_SDK + mini_mmlu.rows + 1))
    assert {c.model for c in calls} == {model.removeprefix("openai/")}
    first_prompt = calls[0].raw_body
    assert [c.raw_body for c in calls[:4]] == [first_prompt] * 4  # the same request, until it succeeds
    # the verdict on lighteval's traffic: four attempts at the first request (the SDK's two retries,
    # then lighteval's loop), each after the 1 ms the 500's retry-after-ms asked for; no finding
    verdict = judge(calls)
    loop_wait_ns = calls[3].started_ns - calls[2].ended_ns  # lighteval's loop, after the SDK's 2 retries
    assert loop_wait_ns >= flaky.retry.sleep * 1e9  # it slept api_retry_sleep (a lower bound only)
    assert (verdict.requests, verdict.attempts, verdict.findings) == (mini_mmlu.rows, len(calls), ()), verdict.render()
    assert len(run.messages) == 1  # lighteval's loop retried exactly once, and nothing ended empty
    assert run.messages[0].endswith(f"retry 1/{flaky.retry.attempts}"), run.messages
    assert "InternalServerError" in run.messages[0]
    assert run.empty_requests == 0
    # the same table as LEV-001
    assert_golden_file(run.stdout_table, EXPECTED_STDOUT, rebuild=REBUILD_STDOUT)
    assert_no_secret(run.run_dir)
    lev(  # type: ignore[operator]
        "LEV-006", calls=len(statuses), failures=statuses.count(500), lighteval_retries=len(run.messages)
    )


def test_lev_010_replay_reproduces_a_run_recorded_from_another_server(
    lev_api_key: str, mini_mmlu: LevDataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lev: object
) -> None:
    """``regen --upstream`` records the real CLI's run from a server that is not evaljig's; the gateway
    replays it to the real CLI (the same table, byte for byte) and vcrpy to the Python path."""
    fixtures = tmp_path / "fixtures"
    inputs = ("providers/fake-openai.json", "datasets/mini-mmlu.eval752.zip")
    builders = [
        Builder(
            name="inputs", outputs=inputs,
            build=lambda out, ctx: [write_output(out, r, (FIXTURES / r).read_bytes()) for r in inputs],
        ),
        cassette_builder(
            "cassettes/mini-mmlu.yaml", provider=inputs[0], dataset=inputs[1],
            stdout="configs/recorded-cli-stdout.txt", name="cassette",
        ),
    ]  # fmt: skip
    upstream_key = "sk-upstream-not-a-real-key-1234"
    monkeypatch.setenv("UPSTREAM_TOKEN", upstream_key)
    with independent_upstream() as (upstream_url, upstream), lighteval_cli_unmeasured():
        assert (
            regen_main(builders, ["--upstream", upstream_url, "--api-key-env", "UPSTREAM_TOKEN"], fixtures=fixtures)
            == 0
        )
    cassette, table = fixtures / "cassettes" / "mini-mmlu.yaml", fixtures / "configs" / "recorded-cli-stdout.txt"
    assert upstream.served == mini_mmlu.rows
    assert set(upstream.authorizations) == {f"Bearer {upstream_key}"}  # the real key went upstream...
    text = cassette.read_text(encoding="utf-8")
    assert upstream_key not in text  # ...and was never written down
    assert lev_api_key not in text
    assert regen_main(builders, ["--check"], fixtures=fixtures) == 0  # without --upstream the recording is kept

    spec = load_provider_spec(FIXTURES / "providers" / "fake-openai.json")
    with Gateway(tape=Replay(cassette)) as player, lighteval_cli_unmeasured():
        replayed = run_cli(
            spec.with_base_url(player.base_url), mini_mmlu.task, custom_tasks=mini_mmlu.module,
            run_dir=tmp_path / "replay",
        )  # fmt: skip
        statuses = [call.status for call in player.calls()]
    assert statuses == [200] * mini_mmlu.rows  # every request found its recording: no miss
    assert replayed.stdout_table == table.read_text(encoding="utf-8")
    em = replayed.scores[mini_mmlu.task]["em"]
    assert 0 < em < 1  # the independent server's answers, not the answer key's

    # vcrpy plays the gateway's host only: lighteval's own lookups (nltk's index) go to the (blocked) network
    player_in_process = vcr.VCR(
        record_mode="none",
        match_on=("method", "path", "body"),
        before_record_request=lambda request: request if request.host == "127.0.0.1" else None,
    )
    with player_in_process.use_cassette(str(cassette), allow_playback_repeats=True) as played:
        python = run_python(
            spec.with_base_url(CANONICAL_BASE_URL), mini_mmlu.task, custom_tasks=mini_mmlu.module,
            run_dir=tmp_path / "python",
        )  # fmt: skip
        assert played.play_count == mini_mmlu.rows
    assert python.scores == replayed.scores
    lev("LEV-010", recorded=mini_mmlu.rows, em=em)  # type: ignore[operator]


def test_lev_008_python_think_empty_is_an_infrastructure_error(
    lev_provider: ProviderSpec,
    gateway: Gateway,
    mini_mmlu: LevDataset,
    tmp_path: Path,
    lev: object,
    lev_trace: LevTrace,
) -> None:
    """The Python path of LEV-008: the same second, uncached call per sample and the same refusal."""
    gateway.set_answers(mini_mmlu.answer_key)
    thinking = lev_provider.with_model("openai/think-empty-gpt-stub")

    with pytest.raises(EmptyAnswers) as caught:
        lev_trace.python(thinking, mini_mmlu.task, custom_tasks=mini_mmlu.module, run_dir=tmp_path / "run")

    calls = gateway.calls()
    assert [c.status for c in calls] == [200] * (2 * mini_mmlu.rows)
    assert [c.raw_body for c in calls[0::2]] == [c.raw_body for c in calls[1::2]]
    assert read_scores(tmp_path / "run" / "out")[mini_mmlu.task]["em"] == 0.0
    assert (caught.value.empty, caught.value.answers, caught.value.reasoning_only) == (mini_mmlu.rows,) * 3
    verdict = judge(calls)
    assert (verdict.requests, verdict.attempts, verdict.findings) == (len(calls), len(calls), ()), verdict.render()
    lev("LEV-008 python", calls=len(calls), empty=caught.value.empty)  # type: ignore[operator]


def test_lev_009_python_context_overflow_names_the_error(
    lev_provider: ProviderSpec,
    gateway: Gateway,
    mini_mmlu: LevDataset,
    tmp_path: Path,
    lev: object,
    lev_trace: LevTrace,
) -> None:
    """The Python path of LEV-009: the same 21 x [400] x 3, and the runner names litellm's own error."""
    gateway.set_answers(mini_mmlu.answer_key)
    short = lev_provider.with_model("openai/context-45-gpt-stub")

    with pytest.raises(RetryBudgetExhausted) as caught:
        lev_trace.python(short, mini_mmlu.task, custom_tasks=mini_mmlu.module, run_dir=tmp_path / "run")

    statuses = [c.status for c in gateway.calls()]
    assert (statuses.count(400), statuses.count(200)) == (21 * short.retry.attempts, 21)
    assert read_scores(tmp_path / "run" / "out")[mini_mmlu.task]["em"] == 14 / mini_mmlu.rows
    assert "21 request(s) ended empty" in caught.value.last_error
    assert "ContextWindowExceededError" in caught.value.last_error  # litellm's, seen by the runner
    assert "maximum context length is 45 tokens" in caught.value.last_error  # the server's message
    lev("LEV-009 python", calls=len(statuses), over=statuses.count(400) // short.retry.attempts)  # type: ignore[operator]


def test_lev_011_python_reasoning_model_names(
    lev_provider: ProviderSpec,
    gateway: Gateway,
    mini_mmlu: LevDataset,
    tmp_path: Path,
    lev: object,
    lev_trace: LevTrace,
) -> None:
    """``openai/o3-mini`` (litellm says it reasons, no 'o1'): lighteval asks max_tokens 80, litellm's
    o-series mapping keeps the spec's max_completion_tokens 8 alone and drops temperature 0 and logprobs;
    a ``reasoning`` model (reasoning_content plus the answer) scores exactly as the happy path."""
    gateway.set_answers(mini_mmlu.answer_key)
    o3 = lev_provider.with_model("openai/o3-mini")
    assert [d.rule for d in LightEvalConfigRenderer(o3).drift()] == ["reasoning"]
    lev_trace.python(o3, mini_mmlu.task, custom_tasks=mini_mmlu.module, run_dir=tmp_path / "o3", max_samples=2)
    sent = [{k: v for k, v in c.body.items() if k != "messages"} for c in gateway.calls()]
    assert sent == [
        {"model": "o3-mini", "max_completion_tokens": 8, "n": 1, "response_format": {"type": "text"}, "seed": 0,
         "stop": ["\n"]},
    ] * 2  # fmt: skip

    gateway.reset()
    thinking = lev_provider.with_model("openai/reasoning-gpt-stub")
    assert LightEvalConfigRenderer(thinking).drift() == []  # a name litellm does not know: no rule applies
    run = lev_trace.python(thinking, mini_mmlu.task, custom_tasks=mini_mmlu.module, run_dir=tmp_path / "reasoning")
    assert [c.status for c in gateway.calls()] == [200] * mini_mmlu.rows
    # lighteval reads content only
    assert_golden_file(run.stdout_table, EXPECTED_STDOUT, rebuild=REBUILD_STDOUT)
    assert (run.answers, run.empty_answers) == (mini_mmlu.rows, 0)
    verdict = judge(gateway)
    assert (verdict.requests, verdict.findings) == (mini_mmlu.rows, ()), verdict.render()
    lev("LEV-011 python", o3_max_completion_tokens=8, reasoning_em=run.scores[mini_mmlu.task]["em"])  # type: ignore[operator]
