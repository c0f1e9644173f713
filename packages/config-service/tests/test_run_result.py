"""Reading lighteval's output (no lighteval needed): tables, scores, budget messages, scrubbing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaljig_config import ConfigError
from evaljig_config._lighteval_runs import prepare_run_dir, run_env
from evaljig_config._run_result import api_messages, budget_summary, read_scores, results_table
from evaljig_config._scrub import scrub_secret

# stdout as lighteval 0.13 prints it when litellm adds its error banners (measured)
NOISY_STDOUT = (
    "\n\x1b[1;31mGive Feedback / Get Help: https://github.com/BerriAI/litellm/issues/new\x1b[0m\n"
    "LiteLLM.Info: If you need to debug this error, use `litellm.turn_on_debug()'.\n\n"
    "|  Task  |Version|Metric|Value|   |Stderr|\n"
    "|--------|-------|------|----:|---|-----:|\n"
    "|all     |       |em    |  0.5|±  |0.2887|\n"
    "|mytask:0|       |em    |  0.5|±  |0.2887|\n\n"
)
# stderr lines from lighteval/models/endpoints/litellm_model.py (lines 248 and 253)
STDERR = (
    "[2026-11-22 09:08:13,1] [ WARNING]: Error in API call: litellm.InternalServerError: boom call 1, "
    "waiting 0.01 seconds before retry 1/3 (litellm_model.py:248)\n"
    "\r 50%|#####     | [ WARNING]: Error in API call: litellm.InternalServerError: boom call 3, "
    "waiting 0.01 seconds before retry 3/3 (litellm_model.py:248)\n"
    "[2026-11-22 09:08:13,2] [   ERROR]: API call failed after 3 attempts, returning empty response. "
    "(litellm_model.py:253)\n"
)


def test_results_table_drops_banners() -> None:
    table = results_table(NOISY_STDOUT)
    assert table.splitlines()[0] == "|  Task  |Version|Metric|Value|   |Stderr|"
    assert len(table.splitlines()) == 4
    assert "\x1b" not in table
    assert results_table("no table here") == ""


def test_budget_messages() -> None:
    messages = api_messages(STDERR)
    assert len(messages) == 3
    assert budget_summary(messages) == (1, 3, "litellm.InternalServerError: boom call 3")
    assert budget_summary(api_messages("all good")) == (0, None, None)


def test_read_scores_takes_the_newest_results(tmp_path: Path) -> None:
    folder = tmp_path / "results" / "openai" / "m"
    folder.mkdir(parents=True)
    (folder / "results_2026-01-01.json").write_text(json.dumps({"results": {"t|0": {"em": 0.0}}}))
    (folder / "results_2026-02-01.json").write_text(json.dumps({"results": {"t|0": {"em": 0.5, "x": "s"}}}))
    assert read_scores(tmp_path) == {"t|0": {"em": 0.5}}
    assert read_scores(tmp_path / "missing") == {}


def test_scrub_masks_text_and_binary_keeping_length(tmp_path: Path) -> None:
    secret = "sk-evaljig-fake-0000"
    (tmp_path / "results.json").write_text(json.dumps({"api_key": secret}))
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01" + secret.encode() + b"\xff")
    (tmp_path / "clean.txt").write_text("nothing")
    touched = scrub_secret(tmp_path, secret)
    assert sorted(p.name for p in touched) == ["blob.bin", "results.json"]
    assert all(secret.encode() not in p.read_bytes() for p in tmp_path.iterdir())
    assert len((tmp_path / "blob.bin").read_bytes()) == 3 + len(secret)
    with pytest.raises(ValueError, match="shorter than 4"):
        scrub_secret(tmp_path, "ab")


def test_run_dir_must_be_fresh(tmp_path: Path) -> None:
    assert prepare_run_dir(tmp_path / "new").is_dir()
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / ".litellm_cache").mkdir()
    with pytest.raises(ConfigError, match="run directory is not empty"):
        prepare_run_dir(tmp_path / "used")


def test_run_env_is_offline_and_isolated(tmp_path: Path) -> None:
    env = run_env(tmp_path, "sk-x", base={"PATH": "/bin"})
    assert env["HF_HUB_OFFLINE"] == "1"
    assert env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert env["HF_HOME"] == str(tmp_path / "hf_home")
    assert env["OPENAI_API_KEY"] == "sk-x"


def test_an_error_spanning_lines_is_still_the_last_error() -> None:
    """A cassette miss's 404 text is several lines: the retry error must carry it, not ``last error: None``."""
    miss = (
        "litellm.NotFoundError: OpenAIException - Cassette miss: POST /v1/chat/completions differs from the "
        "closest recording, interactions[5] (3 of 4 fields alike): temperature: 0 -> 0.3\n  temperature: 0 -> 0.3"
    )
    log = f"WARNING Error in API call: {miss}, waiting 0.01 seconds before retry 1/2\n"
    log += "ERROR API call failed after 2 attempts, returning empty response.\n"
    assert budget_summary(api_messages(log)) == (1, 2, miss)
