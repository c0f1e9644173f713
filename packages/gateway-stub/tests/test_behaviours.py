from __future__ import annotations

import pytest

from evaljig_gateway import Behaviour, behaviour_for, behaviour_table_markdown
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
        ("nofail-1", Behaviour()),  # the token must stand on its own
        ("fail-12x", Behaviour()),
    ],
)
def test_model_names_map_to_behaviours(model: str, expected: Behaviour) -> None:
    assert behaviour_for(model) == expected


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
