"""The ``evaljig`` command: version, init's delegation, and each package's command as a subcommand."""

from __future__ import annotations

from importlib.metadata import version

import pytest

import evaljig
import evaljig_fixtures
from evaljig import MEMBERS, TOOLS, main


def test_version_lists_every_evaljig_package(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for name in MEMBERS:
        assert f"{name} {version(name)}" in lines
    assert any(line.startswith("lighteval ") for line in lines)


def test_version_fails_when_a_package_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("evaljig._cli.MEMBERS", (*MEMBERS, "evaljig-not-a-package"))
    assert main(["version"]) == 1
    assert "evaljig-not-a-package not installed" in capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_each_subcommand_is_the_package_command(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``evaljig <name> --help`` is the help of ``evaljig-<name>`` (argparse's usage names its prog)."""
    assert main([name, "--help"]) == 0
    assert capsys.readouterr().out.startswith(f"usage: {TOOLS[name][0]} ")


def test_forwarding_passes_arguments_output_and_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gateway", "behaviours"]) == 0
    assert capsys.readouterr().out.startswith("| model name contains | behaviour |\n")
    assert main(["report", "no-such-command"]) == 2
    assert "evaljig-report" in capsys.readouterr().err


def test_a_missing_package_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(TOOLS, "gateway", ("evaljig-nope", "evaljig-nope"))
    assert main(["gateway", "serve"]) == 2
    assert capsys.readouterr().err == "evaljig: evaljig gateway needs evaljig-nope (pip install evaljig-nope)\n"


def test_init_delegates_to_the_fixtures_scaffolder(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def init_main(argv: list[str]) -> int:
        seen.append(argv)
        return 3

    monkeypatch.setattr(evaljig_fixtures, "init_main", init_main, raising=False)
    assert main(["init", "--provider", "acme", "--force"]) == 3
    assert seen == [["--provider", "acme", "--force"]]


def test_usage_and_unknown_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert capsys.readouterr().err.startswith("usage: evaljig COMMAND")
    assert main(["--help"]) == 0
    assert "init [ARGS...]" in capsys.readouterr().out
    assert main(["frobnicate"]) == 2
    assert capsys.readouterr().err == (
        "evaljig: unknown command 'frobnicate' (known: init, version, gateway, config, corpus, fixtures, report,"
        " review); evaljig --help\n"
    )
    assert evaljig.main is main
