"""``evaljig-corpus`` as a user runs it: subprocesses against ``evaljig-gateway serve``."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaljig_corpus._cli import COMMANDS, main

from .corpus_copies import own_corpus

FAKE_KEY = "sk-evaljig-cli-not-a-secret"


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evaljig_corpus", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        check=False,
    )


@pytest.fixture(scope="module")
def served_url() -> Iterator[str]:
    """A gateway started the way a user starts one, in its own process; its ready line gives the URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "evaljig_gateway", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline().split()
        assert ready[:1] == ["ready"], proc.stderr.read() if proc.stderr else ready
        yield ready[1]
    finally:
        proc.terminate()
        proc.communicate(timeout=15)


@pytest.mark.gateway
def test_conformance_passes_against_the_served_gateway(served_url: str, golden: object) -> None:
    run = cli(
        "conformance", "--base-url", served_url, "--api-key-env", "EVALJIG_TEST_KEY", env={"EVALJIG_TEST_KEY": FAKE_KEY}
    )
    assert run.returncode == 0, run.stdout + run.stderr
    head, _, table = run.stdout.partition("\n\n")
    assert head == f"conformance of {served_url} (model gpt-stub, embedding model embed-stub)"
    assert golden == table
    assert FAKE_KEY not in run.stdout + run.stderr


@pytest.mark.gateway
def test_the_fault_capabilities_run_only_when_asked(served_url: str) -> None:
    """``--faults`` adds them to the default run; ``--capability`` picks one; the gateway plays every one."""
    run = cli("conformance", "--base-url", served_url, "--faults")
    assert run.returncode == 0, run.stdout + run.stderr
    for capability, fixtures in [
        ("chat", 4),
        ("reasoning", 3),
        ("truncation", 3),
        ("broken_stream", 6),
        ("token_limits", 3),
        ("broken_tools", 3),
    ]:
        assert f"| {capability} | {fixtures} | {fixtures} | 0 | PASS |" in run.stdout, run.stdout
    one = cli("conformance", "--base-url", served_url, "--capability", "broken_stream")
    assert one.returncode == 0, one.stdout + one.stderr
    assert [line.split(" | ")[0] for line in one.stdout.splitlines() if line.startswith("| ")][1:] == [
        "| broken_stream"
    ]
    plain = cli("conformance", "--base-url", served_url, "--capability", "chat")
    assert "reasoning" not in plain.stdout


@pytest.mark.gateway
def test_a_misbehaving_model_fails_the_run(served_url: str) -> None:
    run = cli(
        "conformance",
        "--base-url",
        served_url,
        "--model",
        "always-fail",
        "--capability",
        "chat",
        "--capability",
        "models",
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "| chat | 4 | 3 | 1 | FAIL |" in run.stdout
    assert "| models | 3 | 3 | 0 | PASS |" in run.stdout
    assert "- chat.valid_baseline: chat: response: target failed with HTTP 500" in run.stdout


def test_a_missing_api_key_variable_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["conformance", "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "EVALJIG_UNSET_KEY_VARIABLE"]
    assert main(args) == 2
    assert (
        capsys.readouterr().err
        == "evaljig-corpus: environment variable EVALJIG_UNSET_KEY_VARIABLE is not set or empty\n"
    )


@pytest.mark.parametrize("key", ["sk-SECRET123\r", "sk-SECRET123\t", "sk-SECRÉT123"])
def test_a_key_that_is_not_printable_ascii_is_refused_unseen(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    monkeypatch.setenv("EVALJIG_TEST_BAD_KEY", key)
    args = ["conformance", "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "EVALJIG_TEST_BAD_KEY"]
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert err == (
        "evaljig-corpus: environment variable EVALJIG_TEST_BAD_KEY must hold printable ASCII"
        " (no control or non-ASCII characters)\n"
    )
    assert out == ""


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "soon"])
def test_timeout_must_be_a_finite_positive_number(capsys: pytest.CaptureFixture[str], value: str) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["conformance", "--base-url", "http://127.0.0.1:9/v1", "--timeout", value])
    assert caught.value.code == 2
    assert "error: argument --timeout: must be a " in capsys.readouterr().err


def test_an_unparsable_base_url_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--base-url", "http://[::1"]) == 2
    assert capsys.readouterr().err == "evaljig-corpus: --base-url is not a valid URL: Invalid port: ':1'\n"


@pytest.mark.parametrize(
    ("base_url", "reason"),
    # the over-long host label: UnicodeError on 3.11/3.12, UnicodeEncodeError on 3.13
    [("http://127.0.0.1:9/v1", "ConnectError: "), (f"http://{'a' * 300}.invalid/v1", "Unicode")],
)
def test_an_unreachable_target_stops_before_the_corpus(
    capsys: pytest.CaptureFixture[str], base_url: str, reason: str
) -> None:
    assert main(["conformance", "--base-url", base_url, "--timeout", "5"]) == 1
    out, err = capsys.readouterr()
    assert out == ""  # no table: client-side refusals would otherwise "pass" against nothing
    assert err.startswith(f"evaljig-corpus: cannot connect to {base_url}: {reason}")
    assert err.count("\n") == 1


def test_validate_and_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate"]) == 0
    assert capsys.readouterr().out == "corpus ok: 66 fixtures across 19 capabilities\n"
    assert main(["list"]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert len(listing) == 66
    assert listing[0].split()[:2] == ["chat.valid_baseline", "valid"]


def test_a_subcommand_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main([])
    assert caught.value.code == 2
    assert capsys.readouterr().err.endswith("error: the following arguments are required: COMMAND\n")
    assert [c.name for c in COMMANDS] == ["validate", "list", "conformance"]


def test_validate_list_and_conformance_take_a_corpus_of_your_own(
    corpus_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    own_corpus(corpus_copy, "models")
    assert main(["validate", "--corpus", str(corpus_copy)]) == 0
    assert capsys.readouterr().out == f"corpus ok in {corpus_copy}: 3 fixtures across 1 capabilities\n"
    assert main(["list", "--corpus", str(corpus_copy)]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == [
        "models.valid_baseline",
        "models.invalid_empty_model_id",
        "models.invalid_path_traversal_model_id",
    ]
    (corpus_copy / "models" / "valid_baseline.json").write_text("[", encoding="utf-8")
    assert main(["validate", "--corpus", str(corpus_copy)]) == 1
    assert "models/valid_baseline.json: not valid JSON" in capsys.readouterr().err
    # conformance checks the corpus before it touches the target
    assert main(["conformance", "--base-url", "http://127.0.0.1:9/v1", "--corpus", str(corpus_copy)]) == 2
    assert "models/valid_baseline.json: not valid JSON" in capsys.readouterr().err


@pytest.mark.gateway
def test_conformance_runs_a_corpus_of_your_own(served_url: str, corpus_copy: Path) -> None:
    own_corpus(corpus_copy, "chat")
    run = cli("conformance", "--base-url", served_url, "--corpus", str(corpus_copy))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "| chat | 4 | 4 | 0 | PASS |" in run.stdout
    assert "| models |" not in run.stdout
