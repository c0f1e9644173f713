"""``evaljig-fixtures`` has one command, ``regen``; the corpus commands are ``evaljig-corpus``'s alone."""

from __future__ import annotations

import pytest

from evaljig_fixtures._cli import main


def test_a_subcommand_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main([])
    assert caught.value.code == 2
    assert capsys.readouterr().err.endswith("error: the following arguments are required: COMMAND\n")


@pytest.mark.parametrize("command", ["validate", "list", "conformance"])
def test_the_corpus_commands_are_not_here(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main([command])
    assert caught.value.code == 2
    assert f"invalid choice: '{command}'" in capsys.readouterr().err
