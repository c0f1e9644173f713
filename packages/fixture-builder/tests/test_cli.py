"""``evaljig-fixtures``: ``regen`` is its own; ``validate``, ``list`` and ``conformance`` are ``evaljig-corpus``'s.

The corpus commands stay here for one release, run by ``evaljig-corpus``'s own handlers with
messages naming ``evaljig-fixtures``; ``packages/capability-corpus/tests/test_cli.py`` tests them in full.
"""

from __future__ import annotations

import pytest

from evaljig_corpus._cli import COMMANDS as CORPUS_COMMANDS
from evaljig_fixtures._cli import COMMANDS, main
from evaljig_gateway import Gateway


def test_the_commands_are_the_corpus_ones_then_regen_and_init() -> None:
    assert [c.name for c in COMMANDS] == ["validate", "list", "conformance", "regen", "init"]
    for mine, theirs in zip(COMMANDS, CORPUS_COMMANDS, strict=False):
        assert (mine.configure, mine.run) == (theirs.configure, theirs.run)
        assert mine.help.endswith(f"(deprecated: use `evaljig-corpus {theirs.name}`)")


def test_validate_and_list_still_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate"]) == 0
    assert capsys.readouterr().out == "corpus ok: 27 fixtures across 7 capabilities\n"
    assert main(["list"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 27


def test_corpus_command_messages_name_this_program(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["conformance", "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "EVALJIG_UNSET_KEY_VARIABLE"]
    assert main(args) == 2
    assert (
        capsys.readouterr().err
        == "evaljig-fixtures: environment variable EVALJIG_UNSET_KEY_VARIABLE is not set or empty\n"
    )


@pytest.mark.gateway
def test_conformance_still_runs(gateway: Gateway, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--base-url", gateway.base_url, "--capability", "models"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"conformance of {gateway.base_url} (model gpt-stub, embedding model embed-stub)\n")
    assert "| models | 3 | 3 | 0 | PASS |" in out


def test_a_subcommand_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main([])
    assert caught.value.code == 2
    assert capsys.readouterr().err.endswith("error: the following arguments are required: COMMAND\n")
