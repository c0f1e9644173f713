"""inspect_ai: ``eval`` of one-sample tasks through its OpenAI-compatible provider (``openai-api/evaljig/...``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaljig_gateway import Gateway

from .conftest import FAKE_KEY, client
from .models import ANSWER, QUESTION, City


@pytest.fixture(scope="module")
def module_gateway() -> Iterator[Gateway]:
    """One keyed gateway for the module: inspect_ai keeps a model's client for the process, so its base URL stays."""
    with Gateway(answers={QUESTION: ANSWER}) as gw, pytest.MonkeyPatch.context() as patch:
        patch.setenv("EVALJIG_BASE_URL", gw.base_url)  # what ``openai-api/evaljig/<model>`` reads
        patch.setenv("EVALJIG_API_KEY", FAKE_KEY)
        yield gw


@pytest.fixture
def gateway_env(module_gateway: Gateway) -> Gateway:
    module_gateway.reset()
    return module_gateway


def _eval(task: Any, tmp_path: Path) -> Any:
    inspect_ai = client("inspect_ai")
    [log] = inspect_ai.eval(
        task, model="openai-api/evaljig/gpt-stub", log_dir=str(tmp_path / "logs"), display="none", max_retries=0
    )
    assert log.status == "success", log.error
    return log


@pytest.mark.cell("inspect-ai", "eval")
def test_match_scores_the_keyed_answer(gateway_env: Gateway, tmp_path: Path) -> None:
    inspect_ai = client("inspect_ai")
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    task = inspect_ai.Task(
        dataset=[Sample(input=QUESTION, target=ANSWER), Sample(input="Say something.", target=ANSWER)],
        solver=generate(),
        scorer=match(),
    )
    log = _eval(task, tmp_path)
    [score] = log.results.scores
    assert score.metrics["accuracy"].value == 0.5  # the keyed sample is right, the other is not
    assert len(gateway_env.calls(path="/v1/chat/completions")) == 2


@pytest.mark.cell("inspect-ai", "structured")
def test_response_schema(gateway_env: Gateway, tmp_path: Path) -> None:
    inspect_ai = client("inspect_ai")
    from inspect_ai.dataset import Sample
    from inspect_ai.model import GenerateConfig, ResponseSchema
    from inspect_ai.solver import generate
    from inspect_ai.util import json_schema

    task = inspect_ai.Task(
        dataset=[Sample(input="Describe a city.", target="")],
        solver=generate(),
        config=GenerateConfig(response_schema=ResponseSchema(name="city", json_schema=json_schema(City))),
    )
    log = _eval(task, tmp_path)
    City.model_validate(json.loads(log.samples[0].output.completion))
