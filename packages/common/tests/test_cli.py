"""one_line_errors: an output that cannot be written is one line on stderr and the chosen exit code."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

from evaljig_common import one_line_errors


@one_line_errors("evaljig-demo")
def write_to(argv: Sequence[str] | None = None) -> int:
    """Write ``x`` to the one path in ``argv``."""
    assert argv is not None
    Path(argv[0]).write_text("x")
    return 0


def test_a_folder_as_output_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert write_to([str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"evaljig-demo: {tmp_path}: Is a directory\n"
    assert captured.out == ""


def test_a_path_under_a_file_names_the_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("")
    assert write_to([str(tmp_path / "file" / "out")]) == 2
    assert capsys.readouterr().err == f"evaljig-demo: {tmp_path / 'file' / 'out'}: Not a directory\n"


def test_success_returns_mains_code_and_keeps_its_name(tmp_path: Path) -> None:
    assert write_to([str(tmp_path / "ok")]) == 0
    assert (tmp_path / "ok").read_text() == "x"
    assert write_to.__name__ == "write_to"
    assert write_to.__doc__ == "Write ``x`` to the one path in ``argv``."


def test_the_exit_code_is_the_callers(capsys: pytest.CaptureFixture[str]) -> None:
    @one_line_errors("tool", exit_code=5)
    def main() -> int:
        raise PermissionError(13, "Permission denied")

    assert main() == 5
    assert capsys.readouterr().err == "tool: output: Permission denied\n"


def test_other_errors_are_not_swallowed() -> None:
    @one_line_errors("tool")
    def main() -> int:
        raise ValueError("a bug, with its traceback")

    with pytest.raises(ValueError, match="a bug"):
        main()


def test_stdout_to_dev_full_is_one_line_and_exit_2() -> None:
    """The final flush fails on a full device: caught, reported once, and the exit is quiet."""
    script = textwrap.dedent(
        """
        import sys
        from evaljig_common import one_line_errors

        @one_line_errors("evaljig-demo")
        def main() -> int:
            print("a table nobody will read")
            return 0

        sys.exit(main())
        """
    )
    with Path("/dev/full").open("w") as full:
        proc = subprocess.run(
            [sys.executable, "-c", script], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60, check=False
        )
    assert proc.returncode == 2
    assert proc.stderr == "evaljig-demo: output: No space left on device\n"
