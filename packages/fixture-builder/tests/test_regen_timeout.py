"""``regen --timeout``: a hanging builder is stopped with every process of its group, and nothing is left behind.

The builders run in a child process leading its own process group. Here the builder starts a
helper that ignores SIGTERM (so only the group's SIGKILL ends it), notes it, then hangs. With
``--timeout 5`` regen stops the group once those seconds have passed, names the builder, writes
nothing, and removes its staging folder. The one thing that must happen within the timeout is the
helper's start, a few milliseconds of work: 5 s leaves room for a loaded CI machine (a two-builder
version with ``--timeout 1`` timed out the quick builder too, under coverage on two busy cores).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaljig_fixtures import BuildContext, Builder, regen_main, write_output

SLEEP = shutil.which("sleep")


def _state(pid: int) -> str | None:
    """The process's state letter (``Z`` for a zombie), or None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def _ended(pid: int) -> bool:
    """Whether ``pid`` has ended (gone or a zombie left for init); SIGKILL is delivered asynchronously."""
    for _ in range(2000):  # a liveness wait, not a timing assertion: it returns as soon as the kill landed
        if _state(pid) in (None, "Z"):
            return True
        time.sleep(0.01)
    return False


@pytest.mark.skipif(not hasattr(os, "fork") or SLEEP is None or not Path("/proc/self/stat").exists(), reason="POSIX")
def test_a_hanging_builder_is_stopped_with_its_process_group_and_its_staging_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()

    def hang(out_dir: Path, ctx: BuildContext) -> list[Path]:
        previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the helper ignores SIGTERM from its first instant
        try:
            helper = subprocess.Popen([str(SLEEP), "600"])
        finally:
            signal.signal(signal.SIGTERM, previous)
        (notes / "staging").write_text(str(ctx.staging))
        write_output(out_dir, "hang.txt", b"half-done\n")
        (notes / "helper.pid").write_text(str(helper.pid))
        while True:
            time.sleep(60)

    builders = [Builder("hang", ("hang.txt",), hang)]
    fixtures = tmp_path / "repo" / "fixtures"

    assert regen_main(builders, ["--timeout", "5"], fixtures=fixtures) == 1

    out = capsys.readouterr().out.splitlines()
    assert "[1/1] hang: hang.txt ... FAILED" in out
    assert "    builder hang: did not finish within 5 s (--timeout): stopped it and every process of its group" in out
    assert out[-1] == "regen: 1 builder(s) failed (hang); nothing written"
    assert not fixtures.exists()  # nothing written, not even helper.txt
    assert not Path((notes / "staging").read_text()).exists()  # the staging folder is gone
    helper = int((notes / "helper.pid").read_text())
    assert _ended(helper), f"the helper {helper} (in the builder's process group, ignoring SIGTERM) still runs"


def test_a_builder_whose_process_dies_is_a_failure_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def vanish(out_dir: Path, ctx: BuildContext) -> list[Path]:
        os._exit(3)

    def fine(out_dir: Path, ctx: BuildContext) -> list[Path]:
        return [write_output(out_dir, "fine.txt", b"ok\n")]

    builders = [Builder("vanish", ("v.txt",), vanish), Builder("fine", ("fine.txt",), fine)]
    assert regen_main(builders, [], fixtures=tmp_path / "fixtures") == 1
    out = capsys.readouterr().out.splitlines()
    assert "    builder vanish: its process ended without a result (exit 3)" in out
    assert "[2/2] fine: fine.txt ... updated (1 file(s))" in out  # the next builder gets a new process
    assert out[-1] == "regen: 1 builder(s) failed (vanish); nothing written"


@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf"])
def test_timeout_must_be_a_positive_number_of_seconds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    assert regen_main([], ["--timeout", value], fixtures=tmp_path) == 2
    assert f"argument --timeout: {value!r}: must be a positive number of seconds" in capsys.readouterr().err


SCRIPT = """
import sys, time
from pathlib import Path
from evaljig_fixtures import Builder, regen_main, write_output

NOTES = Path(sys.argv[1])

def hang(out_dir, ctx):
    write_output(out_dir, "hang.txt", b"half-done\\n")
    (NOTES / "staging.tmp").write_text(str(ctx.staging))
    (NOTES / "staging.tmp").rename(NOTES / "staging")
    while True:
        time.sleep(60)

raise SystemExit(regen_main([Builder("hang", ("hang.txt",), hang)], sys.argv[2:], fixtures=NOTES / "fixtures"))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX")
def test_sigterm_to_regen_stops_its_builders_and_removes_the_staging(tmp_path: Path) -> None:
    """A cancelled CI job sends SIGTERM: regen unwinds (builders' group stopped, staging removed) and exits 143."""
    (tmp_path / "build.py").write_text(SCRIPT, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    proc = subprocess.Popen(
        [sys.executable, str(tmp_path / "build.py"), str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        for _ in range(6000):  # until the builder runs (a liveness wait: it returns as soon as it does)
            if (tmp_path / "staging").exists() or proc.poll() is not None:
                break
            time.sleep(0.01)
        assert (tmp_path / "staging").exists(), proc.communicate()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, out + err
    assert err.startswith("evaljig-fixtures regen: terminated (SIGTERM): the builders were stopped")
    assert not Path((tmp_path / "staging").read_text()).exists()
    assert not (tmp_path / "fixtures").exists()
