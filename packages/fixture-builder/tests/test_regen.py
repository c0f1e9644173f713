"""``evaljig-fixtures regen``: deterministic rebuilds, ``--check`` drift listings, and nothing half-written.

The builders that run the real lighteval are skipped here (``--no-lighteval``); the LEV matrix
runs ``regen --check`` with every builder in the lighteval venv (LEV-004).
"""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path

import pytest

from evaljig_common import OFFLINE_ENV
from evaljig_fixtures import regen_main
from evaljig_fixtures._regen_builder import BuildContext, Builder, registry_problems, write_output
from evaljig_fixtures._regen_run import RegenOptions, list_files, run_regen
from testkit.own_fixtures import FIXTURES as COMMITTED
from testkit.own_fixtures import build_script

BUILDERS = build_script().BUILDERS
LIGHTEVAL_OUTPUTS = {o for b in BUILDERS if "lighteval" in b.requires for o in b.outputs}


def snapshot(root: Path) -> dict[str, bytes]:
    return {relative: (root / relative).read_bytes() for relative in sorted(list_files(root))}


def regen(out: Path, *extra: str) -> int:
    """evaljig's own build script, as ``make regen`` runs it, without lighteval."""
    return regen_main(BUILDERS, ["--out", str(out), "--no-lighteval", *extra], fixtures=COMMITTED)


@pytest.fixture(scope="module", autouse=True)
def _warm_imports() -> None:
    """The builders run in a forked child, which inherits this process's imports: litellm (~6 s of CPU) is
    imported once here rather than once per regen in these tests."""
    for name, value in OFFLINE_ENV.items():
        os.environ.setdefault(name, value)  # as regen itself sets them: litellm must not fetch its cost map
    importlib.import_module("litellm")


@pytest.fixture
def fixtures_copy(tmp_path: Path) -> Path:
    """A writable copy of the committed fixtures/, to drift on purpose."""
    shutil.copytree(COMMITTED, tmp_path / "fixtures")
    return tmp_path / "fixtures"


def test_committed_fixtures_are_what_the_builders_produce(capsys: pytest.CaptureFixture[str]) -> None:
    assert regen(COMMITTED, "--check") == 0
    out = capsys.readouterr().out
    assert "regen --check: clean" in out
    assert "skipped  cli-stdout-golden" in out  # said out loud, never silently passed
    # the reason is the option, not a missing lighteval (LEV-004 runs this check where lighteval is installed)
    assert "skipped  cli-stdout-golden: --no-lighteval: this run leaves out the builders that run lighteval" in out
    assert "not importable" not in out


def test_two_rebuilds_give_identical_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "fixtures"
    assert regen(out) == 0
    first = snapshot(out)
    assert regen(out) == 0
    assert snapshot(out) == first
    [summary] = [line for line in capsys.readouterr().out.splitlines()[-4:] if line.startswith("regen: ")]
    assert "0 written, 0 removed" in summary
    committed = {k: v for k, v in snapshot(COMMITTED).items() if k not in LIGHTEVAL_OUTPUTS}
    assert first == committed


def test_check_lists_every_drifted_file(fixtures_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = fixtures_copy / "configs" / "expected-config.yaml"
    config.write_text(config.read_text().replace("api_max_retry: 3", "api_max_retry: 8"))
    (fixtures_copy / "providers" / "fake-openai.json").unlink()
    (fixtures_copy / "notes.txt").write_text("hand-written\n")
    zip_path = fixtures_copy / "datasets" / "mini-mmlu.eval752.zip"
    zip_path.write_bytes(zip_path.read_bytes().replace(b"PK\x05\x06", b"PK\x05\x06\x00", 1))
    before = snapshot(fixtures_copy)

    assert regen(fixtures_copy, "--check") == 1

    out = capsys.readouterr().out
    assert "4 drifted file(s)" in out
    assert "changed  configs/expected-config.yaml" in out
    assert "-  api_max_retry: 8" in out
    assert "+  api_max_retry: 3" in out
    assert "missing  providers/fake-openai.json" in out
    assert "added    notes.txt" in out
    assert "changed  datasets/mini-mmlu.eval752.zip" in out
    assert snapshot(fixtures_copy) == before  # --check never writes


def test_regen_repairs_drift_and_leaves_unknown_files(fixtures_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = fixtures_copy / "configs" / "expected-config.yaml"
    config.write_text("drifted\n")
    (fixtures_copy / "notes.txt").write_text("hand-written\n")

    assert regen(fixtures_copy) == 0

    assert config.read_bytes() == (COMMITTED / "configs" / "expected-config.yaml").read_bytes()
    assert (fixtures_copy / "notes.txt").exists()  # never deletes what no builder owns
    assert "left in place: notes.txt" in capsys.readouterr().out


def _builder(name: str, outputs: tuple[str, ...], body: bytes | Exception, writes: str | None = None) -> Builder:
    def build(out_dir: Path, ctx: BuildContext) -> list[Path]:
        if isinstance(body, Exception):
            write_output(out_dir, outputs[0], b"partial")
            raise body
        return [write_output(out_dir, writes or outputs[0], body)]

    return Builder(name=name, outputs=outputs, build=build)


def test_a_failing_builder_writes_nothing(tmp_path: Path) -> None:
    lines: list[str] = []
    good = _builder("good", ("a.txt",), b"new\n")
    bad = _builder("bad", ("b.txt",), RuntimeError("boom"))
    (tmp_path / "a.txt").write_bytes(b"old\n")

    code = run_regen((good, bad), (good, bad), RegenOptions(out_dir=tmp_path), lines.append)

    assert code == 1
    assert (tmp_path / "a.txt").read_bytes() == b"old\n"
    assert not (tmp_path / "b.txt").exists()
    assert "[2/2] bad: b.txt ... FAILED" in lines
    assert "    RuntimeError: boom" in lines
    assert lines[-1] == "regen: 1 builder(s) failed (bad); nothing written"


def test_a_builder_may_only_write_what_it_owns(tmp_path: Path) -> None:
    lines: list[str] = []
    sneaky = _builder("sneaky", ("a.txt",), b"x", writes="elsewhere.txt")

    assert run_regen((sneaky,), (sneaky,), RegenOptions(out_dir=tmp_path), lines.append) == 1
    assert "    builder sneaky: wrote elsewhere.txt, outside its outputs a.txt" in lines
    assert not (tmp_path / "elsewhere.txt").exists()


def test_registry_rules() -> None:
    assert registry_problems(BUILDERS) == []
    one, two = _builder("one", ("configs/",), b""), _builder("one", ("configs/x.yaml",), b"")
    assert registry_problems((one, two)) == [
        "builder name 'one' is used twice",
        "builders one and one both own configs/x.yaml",
    ]
    with pytest.raises(ValueError, match=r"'\.\./x' is not a relative POSIX path"):
        Builder(name="bad", outputs=("../x",), build=lambda out, ctx: [])
    with pytest.raises(ValueError, match="unknown gateway"):
        Builder(name="bad", outputs=("x",), build=lambda out, ctx: [], requires=frozenset({"gateway"}))


def test_list_names_every_builder(capsys: pytest.CaptureFixture[str]) -> None:
    assert regen_main(BUILDERS, ["--list"], fixtures=COMMITTED) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()] == [b.name for b in BUILDERS]
    assert "(requires lighteval)" in out
