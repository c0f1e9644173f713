"""Replay the committed cassettes with no gateway and no lighteval (network blocked in nox -s tests).

Both were recorded through a recording gateway (``Gateway(tape=Record(...))``) by evaljig's build script.

* ``litellm-caller.yaml``: ``LiteLLMCaller.complete()`` must send byte-for-byte what was recorded
  (two questions) and decode the answers.
* ``mini-mmlu.yaml``: the requests the real lighteval CLI made through litellm on mini-mmlu.
  Re-issuing each recorded body through ``litellm.completion`` must match the recording
  and decode to the recorded answer — so a litellm/OpenAI SDK upgrade that changes what goes
  on the wire, or how answers are read, fails here first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import litellm
import pytest
import yaml

from evaljig_config import LiteLLMCaller, load_provider_spec
from evaljig_fixtures import CANONICAL_BASE_URL, replaying

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
CALLER = FIXTURES / "cassettes" / "litellm-caller.yaml"
MINI_MMLU = FIXTURES / "cassettes" / "mini-mmlu.yaml"
REPLAY_KEY = "sk-evaljig-replay-0000"


def _interactions(path: Path) -> list[dict[str, Any]]:
    return list(yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"])


def test_cassettes_hold_no_secrets_or_machine_details() -> None:
    for path in (CALLER, MINI_MMLU):
        text = path.read_text(encoding="utf-8")
        assert "authorization" not in text.lower()
        assert "sk-" not in text
        for interaction in _interactions(path):
            assert interaction["request"]["uri"].startswith(CANONICAL_BASE_URL)
            assert set(interaction["request"]["headers"]) <= {"content-type"}


def test_litellm_caller_replays_its_cassette_byte_for_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = load_provider_spec(FIXTURES / "providers" / "fake-openai.json")
    assert spec.base_url == CANONICAL_BASE_URL
    monkeypatch.setenv(spec.api_key_env, REPLAY_KEY)
    sleeps: list[float] = []
    with replaying(CALLER) as cassette:
        first = LiteLLMCaller(spec, sleep=sleeps.append).complete(
            [{"role": "user", "content": "What is the capital of France?"}]
        )
        second = LiteLLMCaller(spec, sleep=sleeps.append).complete(
            [{"role": "user", "content": "Name a prime number."}]
        )
        assert cassette.all_played
    assert first.choices[0].message.content  # type: ignore[union-attr]
    assert second.choices[0].message.content  # type: ignore[union-attr]
    assert [i["response"]["status"]["code"] for i in _interactions(CALLER)] == [200, 200]
    assert sleeps == []  # the recording kept answers only: no retry


def test_lighteval_cassette_replays_through_litellm() -> None:
    interactions = _interactions(MINI_MMLU)
    assert len(interactions) >= 40  # one request per mini-mmlu sample
    with replaying(MINI_MMLU) as cassette:
        for interaction in interactions:
            body = json.loads(interaction["request"]["body"])
            params = {k: v for k, v in body.items() if k not in ("model", "messages")}
            reply = litellm.completion(
                model=f"openai/{body['model']}", messages=body["messages"], base_url=CANONICAL_BASE_URL,
                api_key=REPLAY_KEY, max_retries=0, **params,
            )  # fmt: skip
            recorded = json.loads(interaction["response"]["body"]["string"])
            assert reply.choices[0].message.content == recorded["choices"][0]["message"]["content"]  # type: ignore[union-attr]
        assert cassette.all_played
