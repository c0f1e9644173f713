"""A real git repository in a temporary folder, and ``evaljig-review`` run in it as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REVIEW = [sys.executable, "-c", "import sys; from evaljig_review._cli import main; sys.exit(main())"]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


@dataclass
class GitRepo:
    root: Path

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=self.root, capture_output=True, text=True, env={**os.environ, **GIT_ENV}, check=True
        )
        return done.stdout

    def write(self, relative: str, data: str | bytes) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
        return path

    def read(self, relative: str) -> str:
        return (self.root / relative).read_text(encoding="utf-8")

    def commit(self, message: str = "base") -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)

    def review(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, **GIT_ENV, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
        return subprocess.run(
            [*REVIEW, *args], cwd=cwd or self.root, capture_output=True, text=True, env=env, check=False
        )


def make_repo(path: Path) -> GitRepo:
    path.mkdir(parents=True, exist_ok=True)
    repo = GitRepo(path)
    repo.git("init", "-q", "-b", "main")
    return repo
