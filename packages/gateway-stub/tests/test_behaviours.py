from __future__ import annotations

import pytest

from evaljig_gateway import Behaviour, base_model, behaviour_for, behaviour_table_markdown
from evaljig_gateway._behaviours import ALWAYS


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-stub", Behaviour()),
        ("openai/fail-once", Behaviour(fail_first=1)),
        ("fail-3-model", Behaviour(fail_first=3)),
        ("always-fail", Behaviour(fail_first=ALWAYS)),
        ("Always-Fail-Upper", Behaviour(fail_first=ALWAYS)),
        ("rate-limit", Behaviour(fail_first=ALWAYS, failure_status=429)),
        ("fail-2-rate-limit", Behaviour(fail_first=2, failure_status=429)),
        ("slow-250", Behaviour(delay_ms=250)),
        ("stall", Behaviour(stall=True)),
        ("malformed", Behaviour(malformed=True)),
        ("bad-request", Behaviour(bad_request=True)),
        ("gpt-Reasoning", Behaviour(reasoning=True)),
        ("THINK-EMPTY-qwen", Behaviour(think_empty=True)),
        ("fail-once-length", Behaviour(fail_first=1, length=True)),
        ("context-4096-tpm-500", Behaviour(context_tokens=4096, tokens_per_window=500)),
        ("cut-3-drop-4-garble-5", Behaviour(cut_after=3, drop_after=4, garble_at=5)),
        ("bad-tool-args_unknown-tool", Behaviour(bad_tool_args=True, unknown_tool=True)),
        ("lengthy-reasoningx-context", Behaviour()),  # new tokens stand on their own too
        ("nofail-1", Behaviour()),  # the token must stand on its own
        ("fail-12x", Behaviour()),
    ],
)
def test_model_names_map_to_behaviours(model: str, expected: Behaviour) -> None:
    assert behaviour_for(model) == expected


@pytest.mark.parametrize(
    ("model", "base"),
    [
        ("gpt-4o-mini-reasoning", "gpt-4o-mini"),
        ("Think-Empty-qwen3", "qwen3"),
        ("gpt-length-cut-3", "gpt"),
        ("gpt-stall-slow-5", "gpt"),
        ("drop-2.gpt.garble-1", "gpt"),
        ("context-4096-gpt-tpm-100", "gpt"),
        ("bad-tool-args-gpt-unknown-tool", "gpt"),
    ],
)
def test_base_model_drops_the_new_tokens(model: str, base: str) -> None:
    assert base_model(model) == base


def test_failure_schedule() -> None:
    twice = behaviour_for("fail-2")
    assert [twice.failure_status_for(n) for n in (1, 2, 3, 4)] == [500, 500, None, None]
    always = behaviour_for("always-fail")
    assert {always.failure_status_for(n) for n in range(1, 50)} == {500}
    assert behaviour_for("gpt").failure_status_for(1) is None


def test_behaviour_table_lists_every_token(golden: object) -> None:
    table = behaviour_table_markdown()
    for token in (
        "fail-once",
        "fail-<N>",
        "always-fail",
        "rate-limit",
        "slow-<ms>",
        "stall",
        "malformed",
        "bad-request",
    ):
        assert f"`{token}`" in table
    assert golden == table
