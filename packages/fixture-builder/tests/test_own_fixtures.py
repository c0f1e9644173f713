"""evaljig's own fixtures/ are built the way a team's are: one build script, public names only, gateway recordings.

``make regen`` (``nox -s regen``) runs ``scripts/testing/build_lighteval_fixture.py``; no builder
set ships inside evaljig-fixtures, so a bare ``evaljig-fixtures regen`` in evaljig's checkout
refuses and names that script, as it does in a team's repository.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from evaljig_common import find_secret
from evaljig_fixtures._cli import main
from evaljig_gateway import load_cassette, write_cassette
from testkit.own_fixtures import BUILD_SCRIPT, FIXTURES, ROOT, build_script

CASSETTES = sorted((FIXTURES / "cassettes").glob("*.yaml"))


def _evaljig_imports(tree: ast.Module) -> list[tuple[str, str]]:
    """``(module, name)`` for every ``from evaljig_... import name`` and ``(module, "")`` for ``import evaljig_...``."""
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("evaljig"):
            found += [(node.module or "", alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names if alias.name.startswith("evaljig")]
    return found


def test_the_build_script_uses_only_public_names() -> None:
    imports = _evaljig_imports(ast.parse(BUILD_SCRIPT.read_text(encoding="utf-8")))
    assert ("evaljig_fixtures", "regen_main") in imports
    for module, name in imports:
        assert not any(part.startswith("_") for part in module.split(".")), f"private module {module}"
        assert name in importlib.import_module(module).__all__, f"{module}.{name} is not public"


def test_the_build_script_is_what_a_teams_is_builders_and_regen_main() -> None:
    script = build_script()
    assert [b.name for b in script.BUILDERS] == [
        "providers", "mini-mmlu", "polyglot", "config-golden", "caller-cassette", "cassette", "cli-stdout-golden",
    ]  # fmt: skip
    tree = ast.parse(BUILD_SCRIPT.read_text(encoding="utf-8"))
    main_block = [node for node in tree.body if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)]
    assert [ast.unparse(n) for n in main_block[0].body] == [
        "raise SystemExit(regen_main(BUILDERS, sys.argv[1:], fixtures=FIXTURES))"
    ]


def test_make_regen_runs_the_build_script() -> None:
    noxfile = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    regen = next(n for n in noxfile.body if isinstance(n, ast.FunctionDef) and n.name == "regen")
    text = ast.unparse(regen)
    assert "BUILD_SCRIPT" in text
    assert "evaljig-fixtures" not in text
    [value] = [
        n.value for n in noxfile.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "BUILD_SCRIPT"
    ]
    assert ast.literal_eval(value) == BUILD_SCRIPT.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("cassette", CASSETTES, ids=[c.name for c in CASSETTES])
def test_own_cassettes_are_gateway_recordings_that_pass_its_secret_scan(cassette: Path, tmp_path: Path) -> None:
    """Each cassette is exactly what the recording gateway writes (its writer runs the secret scan before
    any byte is written), and holds the key the build script's clients sent in no spelling."""
    data = cassette.read_bytes()
    rewritten = tmp_path / cassette.name
    write_cassette(rewritten, load_cassette(cassette))
    assert rewritten.read_bytes() == data
    assert find_secret(data, {"the recording key": build_script().RECORDING_KEY}) is None
    assert {p.name for p in CASSETTES} == {"litellm-caller.yaml", "mini-mmlu.yaml"}


def test_bare_regen_in_evaljigs_checkout_names_its_build_script(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    before = sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*"))
    for argv in (["regen"], ["regen", "--check"], ["regen", "--list"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert err.startswith(f"evaljig-fixtures regen: {ROOT} registers no builders")
        assert err.endswith(
            "fix: run this repository's build script: python scripts/testing/build_lighteval_fixture.py\n"
        )
    assert sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*")) == before
