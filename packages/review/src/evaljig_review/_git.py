"""Git, as a subprocess: the changed paths between a revision and the working tree, old bytes, restores.

The working tree is compared with ``base`` (``HEAD`` by default) as a whole: staged and unstaged
changes alike, plus untracked files git does not ignore. Renames are a removal and an addition
(``--no-renames``), so each path has exactly one status.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from evaljig_review._errors import ReviewError

#: ``git diff --name-status`` letters -> the review's statuses.
_STATUS = {"A": "added", "D": "deleted"}


def _run(args: list[str], cwd: Path, *, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError as exc:
        raise ReviewError("git is not installed (the review compares with a git revision)") from exc
    if check and done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ReviewError(f"git {' '.join(args)}: {reason[-1] if reason else f'exit {done.returncode}'}")
    return done


def toplevel(folder: Path) -> Path:
    """The repository root holding ``folder``; ``ReviewError`` for a folder outside any git repository."""
    done = _run(["rev-parse", "--show-toplevel"], folder, check=False)
    if done.returncode != 0:
        raise ReviewError(f"{folder}: not inside a git repository (evaljig review compares with a git revision)")
    return Path(done.stdout.decode("utf-8").strip())


@dataclass(frozen=True)
class Repo:
    """One repository and the revision the working tree is compared with."""

    root: Path
    base: str = "HEAD"

    def verify_base(self) -> bool:
        """Whether ``base`` names a commit; ``False`` for ``HEAD`` of a repository with no commit yet."""
        done = _run(["rev-parse", "--verify", "-q", f"{self.base}^{{commit}}"], self.root, check=False)
        if done.returncode != 0 and self.base != "HEAD":
            raise ReviewError(f"--base {self.base}: not a commit in {self.root}")
        return done.returncode == 0

    def changed(self) -> list[tuple[str, str]]:
        """``(status, path)`` for every path differing from ``base``: ``added``, ``deleted`` or ``modified``."""
        rows: dict[str, str] = {}
        if self.verify_base():
            out = _run(["diff", "--name-status", "--no-renames", "-z", self.base, "--"], self.root).stdout
            fields = out.decode("utf-8").split("\0")
            for status, path in zip(fields[0::2], fields[1::2], strict=False):
                if path:
                    rows[path] = _STATUS.get(status[:1], "modified")
        out = _run(["ls-files", "--others", "--exclude-standard", "-z"], self.root).stdout
        for path in out.decode("utf-8").split("\0"):
            if path:
                rows[path] = "added"
        return sorted((status, path) for path, status in rows.items())

    def files(self) -> list[str]:
        """Tracked and untracked (not ignored) files of the working tree, relative to the root."""
        out = _run(["ls-files", "--cached", "--others", "--exclude-standard", "-z"], self.root).stdout
        return sorted({p for p in out.decode("utf-8").split("\0") if p})

    def old_bytes(self, path: str) -> bytes | None:
        """The file as ``base`` has it; ``None`` when it is not there."""
        done = _run(["show", f"{self.base}:{path}"], self.root, check=False)
        return done.stdout if done.returncode == 0 else None

    def new_bytes(self, path: str) -> bytes | None:
        target = self.root / path
        return target.read_bytes() if target.is_file() else None
