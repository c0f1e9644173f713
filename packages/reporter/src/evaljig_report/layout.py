"""Where reports go: ``<root>/<run>/<session>/<worker>/<case dir>/case.json``.

Run, session and worker names come from the environment so that every nox session, xdist
worker and CI shard of one run lands in one tree that ``evaljig-report merge`` can read.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

DEFAULT_ROOT = "reports"
LOCAL_SESSION = "local"
SOLO_WORKER = "main"
CASE_FILE = "case.json"
INDEX_FILE = "index.json"
MERGED_DIR = "merged"

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_SEGMENT = 64


def safe_segment(value: str, *, fallback: str = "_", limit: int = _MAX_SEGMENT) -> str:
    """One path segment made of ``[A-Za-z0-9._-]``, never hidden, ``.`` or ``..``."""
    cleaned = _UNSAFE.sub("_", value).strip("._-")[:limit].strip("._-")
    return cleaned or fallback


def run_id(env: Mapping[str, str] | None = None, now: datetime | None = None) -> str:
    """``EVALJIG_RUN``, else ``<GITHUB_RUN_ID>-<GITHUB_RUN_ATTEMPT>``, else a UTC timestamp."""
    env = os.environ if env is None else env
    if env.get("EVALJIG_RUN"):
        return safe_segment(env["EVALJIG_RUN"])
    if env.get("GITHUB_RUN_ID"):
        return safe_segment(f"{env['GITHUB_RUN_ID']}-{env.get('GITHUB_RUN_ATTEMPT', '1')}")
    return (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")


def session_name(env: Mapping[str, str] | None = None) -> str:
    """The nox session (``EVALJIG_SESSION``, set by the noxfile), else ``local``."""
    env = os.environ if env is None else env
    return safe_segment(env.get("EVALJIG_SESSION") or LOCAL_SESSION)


def case_dirname(suite: str, case_id: str) -> str:
    """A readable, collision-free directory name for one case (a digest keeps it unique)."""
    key = f"{suite}\0{case_id}".encode(errors="surrogatepass")  # a lone surrogate must not end the run
    digest = hashlib.sha1(key, usedforsecurity=False).hexdigest()[:10]
    tail = suite.rsplit("/", 1)[-1].replace("::", ".")
    return f"{safe_segment(f'{tail}.{case_id}', limit=80)}-{digest}"


@dataclass(frozen=True)
class Layout:
    """The folders of one worker of one session of one run."""

    root: Path
    run: str
    session: str
    worker: str

    @property
    def session_dir(self) -> Path:
        return self.root / self.run / self.session

    @property
    def worker_dir(self) -> Path:
        return self.session_dir / self.worker

    def case_dir(self, suite: str, case_id: str) -> Path:
        return self.worker_dir / case_dirname(suite, case_id)


class RelativePaths:
    """Case file paths relative to the merged folder, so the two can move together (cached per worker folder)."""

    def __init__(self, out_dir: Path) -> None:
        self._base = str(Path(out_dir).absolute())
        self._cache: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        parent, case_dir, name = path.rsplit(os.sep, 2)
        rel = self._cache.get(parent)
        if rel is None:
            rel = self._cache[parent] = Path(os.path.relpath(parent, self._base)).as_posix()
        return f"{rel}/{case_dir}/{name}"


def display_path(path: str) -> str:
    """A path relative to the working directory when it is below it (stable in goldens and CI logs)."""
    cwd = Path.cwd()
    p = Path(path)
    try:
        return p.relative_to(cwd).as_posix()
    except ValueError:
        return p.as_posix()
