"""The root conftest's hypothesis profile: property tests are repeatable unless asked to explore."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

drawn: list[list[int]] = []


@given(st.lists(st.integers(), min_size=1, max_size=5))
def _draw(values: list[int]) -> None:
    drawn.append(values)


def test_property_tests_draw_the_same_examples_on_every_run(request: pytest.FixtureRequest) -> None:
    if request.config.getoption("hypothesis_profile", None) not in (None, "evaljig"):
        pytest.skip("run with another --hypothesis-profile (fresh examples are its point)")
    assert settings.default.derandomize is True
    assert settings.default.database is None  # nothing remembered between runs either
    runs = []
    for _ in range(2):
        drawn.clear()
        _draw()
        runs.append(list(drawn))
    assert runs[0] == runs[1]
