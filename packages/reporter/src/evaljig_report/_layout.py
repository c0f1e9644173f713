"""Where reports go: ``<root>/<run>/<session>/<worker>/<case dir>/case.json``.

Run, session and worker names come from the environment so that every nox session, xdist
worker and CI shard of one run lands in one tree that ``evaljig-report merge`` can read.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from evaljig_common import safe_segment

DEFAULT_ROOT = "reports"
LOCAL_SESSION = "local"
SOLO_WORKER = "main"
CASE_FILE = "case.json"
INDEX_FILE = "index.json"
#: What a worker collected, written before it runs anything (see merge: collected vs recorded).
COLLECTED_FILE = "collected.json"
MERGED_DIR = "merged"
#: What a merge writes into its output folder, beside its ``index.json``.
SUMMARY_FILE = "summary.md"
HTML_FILE = "report.html"
JUNIT_FILE = "junit.xml"


def session_name(env: Mapping[str, str] | None = None) -> str:
    """The nox session (``EVALJIG_SESSION``, set by the noxfile), else ``local``.

    ``merged`` (in any letter case) is refused with ``ValueError``: a run's merged report is
    written to ``<run>/merged/``, where that session's reports would be, and be taken for it.
    """
    env = os.environ if env is None else env
    name = safe_segment(env.get("EVALJIG_SESSION") or LOCAL_SESSION)
    if name.casefold() == MERGED_DIR:
        raise ValueError(
            f"EVALJIG_SESSION={env.get('EVALJIG_SESSION')!r}: {MERGED_DIR!r} is reserved for a run's merged report "
            "folder; name the session something else"
        )
    return name


def case_dirname(suite: str, case_id: str, attempt: int | None = None) -> str:
    """A readable, collision-free directory name for one case (a digest keeps it unique).

    One repeat of a case (``--evaljig-repeats``) gets a folder of its own, ``…-<digest>-a<attempt>``:
    repeats of one case may run on one worker, and each keeps its own output and artifacts.
    """
    key = f"{suite}\0{case_id}".encode(errors="surrogatepass")  # a lone surrogate must not end the run
    digest = hashlib.sha1(key, usedforsecurity=False).hexdigest()[:10]
    tail = suite.rsplit("/", 1)[-1].replace("::", ".")
    name = f"{safe_segment(f'{tail}.{case_id}', limit=80)}-{digest}"
    return name if attempt is None else f"{name}-a{attempt}"


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

    def case_dir(self, suite: str, case_id: str, attempt: int | None = None) -> Path:
        return self.worker_dir / case_dirname(suite, case_id, attempt)


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
