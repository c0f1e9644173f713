"""``regen`` writes back all or nothing: interrupted at any step, fixtures/ is fully old or fully new.

Each test interrupts the write-back at a named step (``swap.STEPS``): in process by raising from
the step hook, or by SIGKILL-ing a child process parked at that step. Then a rerun must finish
or roll back, and leave exactly the new content and no work folder. Nothing here is timed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evaljig_fixtures import _regen_run
from evaljig_fixtures._regen_builder import BuildContext, Builder, write_output
from evaljig_fixtures._regen_run import STEPS, RegenOptions, list_files, run_regen, work_dir

OLD = {"a.txt": b"old a\n", "b/c.txt": b"old c\n", "b/gone.txt": b"no builder makes me any more\n", "notes.txt": b"x\n"}
NEW = {"a.txt": b"new a\n", "b/c.txt": b"new c\n", "notes.txt": b"x\n"}  # notes.txt: unowned, left in place


def _build_a(out_dir: Path, ctx: BuildContext) -> list[Path]:
    return [write_output(out_dir, "a.txt", NEW["a.txt"])]


def _build_b(out_dir: Path, ctx: BuildContext) -> list[Path]:
    return [write_output(out_dir, "b/c.txt", NEW["b/c.txt"])]


BUILDERS = (Builder("a", ("a.txt",), _build_a), Builder("b", ("b/",), _build_b))


class Interrupted(BaseException):
    """Stands for SIGINT (KeyboardInterrupt) or SIGTERM arriving at a step."""


def snapshot(root: Path) -> dict[str, bytes]:
    return {r: (root / r).read_bytes() for r in sorted(list_files(root))}


@pytest.fixture
def fixtures(tmp_path: Path) -> Path:
    root = tmp_path / "repo" / "fixtures"
    for relative, data in OLD.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(data)
    return root


def regen(out_dir: Path, lines: list[str], *, check: bool = False, on_step: _regen_run.OnStep | None = None) -> int:
    return run_regen(BUILDERS, BUILDERS, RegenOptions(out_dir=out_dir, check=check, on_step=on_step), lines.append)


def interrupt_at(step: str, reached: list[str]) -> _regen_run.OnStep:
    def on_step(name: str) -> None:
        reached.append(name)
        if name == step:
            raise Interrupted(step)

    return on_step


@pytest.fixture(params=["exchange", "two-renames"])
def exchange(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Linux swaps in one ``renameat2(RENAME_EXCHANGE)``; other systems (simulated) use two renames."""
    if request.param == "two-renames":
        monkeypatch.setattr(_regen_run, "_exchange", lambda first, second: False)
    return str(request.param)


def test_an_uninterrupted_regen_swaps_in_the_new_content(fixtures: Path, exchange: str) -> None:
    steps: list[str] = []
    lines: list[str] = []
    assert regen(fixtures, lines, on_step=steps.append) == 0
    assert snapshot(fixtures) == NEW
    assert not work_dir(fixtures).exists()
    if exchange == "exchange":
        assert steps == ["stage", "mark-ready", "exchange", "unmark", "remove-old"]
    else:
        assert steps == ["stage", "mark-ready", "exchange", "move-old-aside", "move-new-in", "unmark", "remove-old"]
    assert "regen: 2 builder(s), 2 file(s) in" in lines[-1]
    assert "2 written, 1 removed" in lines[-1]


def test_a_first_regen_creates_the_folder(tmp_path: Path) -> None:
    out = tmp_path / "new" / "checkout" / "fixtures"
    assert regen(out, []) == 0
    assert snapshot(out) == {"a.txt": NEW["a.txt"], "b/c.txt": NEW["b/c.txt"]}
    assert not work_dir(out).exists()


@pytest.mark.parametrize("step", STEPS)
def test_an_interrupt_at_any_step_leaves_old_or_new_and_a_rerun_finishes(
    fixtures: Path, exchange: str, step: str
) -> None:
    reached: list[str] = []
    if exchange == "exchange" and step in ("move-old-aside", "move-new-in"):
        pytest.skip("the one-step exchange has no separate renames")
    with pytest.raises(Interrupted):
        regen(fixtures, [], on_step=interrupt_at(step, reached))
    assert reached[-1] == step

    before_swap = STEPS.index(step) <= STEPS.index("move-old-aside")
    if step == "move-new-in":  # between the two renames: the target is missing, both versions are kept
        assert not fixtures.exists()
    else:
        assert snapshot(fixtures) == (OLD if before_swap else NEW)
    # an interrupt before READY removes the staging at once; after it, the work folder waits for the rerun
    assert work_dir(fixtures).exists() == (STEPS.index(step) > STEPS.index("mark-ready"))

    lines: list[str] = []
    assert regen(fixtures, lines) == 0
    assert snapshot(fixtures) == NEW
    assert not work_dir(fixtures).exists()


@pytest.mark.parametrize(
    ("step", "said"),
    [
        ("exchange", "finished an interrupted regen"),  # complete: rolled forward
        ("unmark", "finished an interrupted regen"),  # new content in place: only cleanup left
        ("remove-old", "removed what an interrupted regen"),
    ],
)
def test_the_rerun_says_what_it_repaired(fixtures: Path, step: str, said: str) -> None:
    with pytest.raises(Interrupted):
        regen(fixtures, [], on_step=interrupt_at(step, []))
    check: list[str] = []
    assert regen(fixtures, check, check=True) == 1  # --check never repairs, it says what is pending
    assert check == [f"regen --check: an interrupted regen of {fixtures} is pending; run `evaljig-fixtures regen`"]
    lines: list[str] = []
    assert regen(fixtures, lines) == 0
    assert lines[0].startswith(f"regen: {said} of {fixtures}")
    assert snapshot(fixtures) == NEW


CHILD = """
import sys
from pathlib import Path

sys.path.insert(0, {tests!r})
import test_regen_swap as t
from evaljig_fixtures._regen_run import RegenOptions, run_regen

def park(name):
    if name == {step!r}:
        print("parked at", name, flush=True)
        sys.stdin.readline()  # never answered: the parent kills us here

run_regen(t.BUILDERS, t.BUILDERS, RegenOptions(out_dir=Path({out!r}), on_step=park), lambda line: None)
"""


@pytest.mark.parametrize("step", ["mark-ready", "exchange", "move-new-in", "remove-old"])
def test_a_killed_regen_is_repaired_by_the_next_run(fixtures: Path, step: str) -> None:
    """SIGKILL runs no handler and no ``finally``: only the on-disk protocol can save the folder."""
    script = textwrap.dedent(CHILD).format(tests=str(Path(__file__).parent), step=step, out=str(fixtures))
    if step == "move-new-in":  # only reached without the one-step exchange
        script = script.replace("run_regen(", "t._regen_run._exchange = lambda a, b: False\nrun_regen(", 1)
    # the killed child's builder staging (a TemporaryDirectory) outlives it: keep it in this test's folder
    tmpdir = fixtures.parent.parent / "child-tmp"  # tmp_path, beside the repo
    tmpdir.mkdir()
    with subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmpdir)},
    ) as child:
        assert child.stdout is not None
        parked = child.stdout.readline()
        child.send_signal(signal.SIGKILL)
    assert parked == f"parked at {step}\n"
    assert child.returncode == -signal.SIGKILL
    if step == "move-new-in":
        assert not fixtures.exists()
    else:
        assert snapshot(fixtures) in (OLD, NEW)

    lines: list[str] = []
    assert regen(fixtures, lines) == 0
    assert snapshot(fixtures) == NEW
    assert not work_dir(fixtures).exists()
    if step == "mark-ready":  # staged but never marked complete: thrown away, then rebuilt
        assert lines[0].startswith(f"regen: rolled back an interrupted regen of {fixtures}")
