"""lighteval 0.13's model-name rules, warned about when a spec is rendered (LEV-011 pins the traffic)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from evaljig_config import LightEvalConfigRenderer, lighteval_drift, parse_provider_spec
from evaljig_config._cli import main

from .placeholders import SPEC


def _spec(model: str, **generation: object) -> dict[str, object]:
    return {**SPEC, "model": model, "generation": {**SPEC["generation"], **generation}}  # type: ignore[dict-item]


def test_a_plain_model_has_no_drift() -> None:
    assert lighteval_drift(parse_provider_spec(SPEC)) == []


def test_the_o1_substring_rule_names_every_dropped_parameter() -> None:
    """Any name containing 'o1' (an alias too), not only OpenAI's o1: lighteval tests a substring."""
    (found,) = lighteval_drift(parse_provider_spec(_spec("openai/gpt-stub-o1", stop_tokens=["\n"])))
    assert found.rule == "o1"
    assert found.parameters == ("max_new_tokens", "stop_tokens", "temperature", "seed")
    assert "its name contains 'o1'" in found.message
    assert "temperature (sent as temperature), seed (sent as seed) dropped" in found.message
    assert "max_new_tokens (sent as max_completion_tokens)" in found.message


def test_a_reasoning_model_by_litellm_gets_the_times_ten_rule() -> None:
    (found,) = lighteval_drift(parse_provider_spec(_spec("openai/o3-mini")))
    assert (found.rule, found.parameters) == ("reasoning", ("max_tokens",))
    assert "max_tokens = 10 x the task's generation size" in found.message
    assert "generation.max_new_tokens is still sent as max_completion_tokens" in found.message
    spec = {**SPEC, "model": "openai/o3-mini", "generation": {"temperature": 0.0}}
    (unset,) = lighteval_drift(parse_provider_spec(spec))
    assert unset.parameters == ("max_tokens", "max_completion_tokens")


def test_o1_itself_gets_both_rules_and_the_cap_is_named() -> None:
    spec = parse_provider_spec({**_spec("openai/o1"), "max_model_length": 50})
    assert [d.rule for d in lighteval_drift(spec)] == ["reasoning", "o1"]
    assert "capped at 50" in lighteval_drift(spec)[0].message


def test_presence_penalty_is_never_sent() -> None:
    (found,) = lighteval_drift(parse_provider_spec(_spec("openai/gpt-stub", presence_penalty=0.5)))
    assert (found.rule, found.parameters) == ("never-sent", ("presence_penalty",))


def test_render_warns_on_stderr_and_keeps_stdout_the_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(SPEC))
    assert main(["render", str(path), "--model", "openai/o1"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("# lighteval endpoint litellm config")
    lines = err.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("evaljig-config: warning: model 'openai/o1': litellm says it reasons")
    assert lines[1].startswith("evaljig-config: warning: model 'openai/o1': its name contains 'o1'")
    assert main(["render", str(path)]) == 0
    assert capsys.readouterr().err == ""


def test_write_config_logs_the_drift(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    service = LightEvalConfigRenderer(parse_provider_spec(_spec("openai/gpt-stub-o1")))
    with caplog.at_level(logging.WARNING, logger="evaljig_config"):
        service.write_config(tmp_path / "config.yaml")
    assert [r.getMessage().split(": ", 1)[1] for r in caplog.records] == [d.message for d in service.drift()]
