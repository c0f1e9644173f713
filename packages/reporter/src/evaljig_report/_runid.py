"""Run ids, shared by the pytest plugin and the noxfile (which loads this file by path: stdlib only).

An explicit id (``EVALJIG_RUN``, or the GitHub run and attempt) names one run on purpose: every
nox session and CI shard of it reports into the same folder. A timestamp is only a default, so
two runs started in the same second must not share it: :func:`claim_run` creates the folder
exclusively and adds a suffix when another run already took the name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_SEGMENT = 64
_MAX_CLAIMS = 1000


def safe_segment(value: str, *, fallback: str = "_", limit: int = _MAX_SEGMENT) -> str:
    """One path segment made of ``[A-Za-z0-9._-]``, never hidden, ``.`` or ``..``."""
    cleaned = _UNSAFE.sub("_", value).strip("._-")[:limit].strip("._-")
    return cleaned or fallback


def explicit_run_id(env: Mapping[str, str] | None = None) -> str | None:
    """``EVALJIG_RUN``, else ``<GITHUB_RUN_ID>-<GITHUB_RUN_ATTEMPT>`` (sanitised), else None."""
    env = os.environ if env is None else env
    if env.get("EVALJIG_RUN"):
        return safe_segment(env["EVALJIG_RUN"])
    if env.get("GITHUB_RUN_ID"):
        return safe_segment(f"{env['GITHUB_RUN_ID']}-{env.get('GITHUB_RUN_ATTEMPT', '1')}")
    return None


def run_id(env: Mapping[str, str] | None = None, now: datetime | None = None) -> str:
    """The explicit run id, else a UTC timestamp (``20250102T030405Z``)."""
    return explicit_run_id(env) or (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")


def claim_run(root: Path, env: Mapping[str, str] | None = None, now: datetime | None = None) -> str:
    """The run id for a new run under ``root``; a timestamp id gets its folder created exclusively.

    ``mkdir`` without ``exist_ok`` is atomic, so of two runs in the same second one gets
    ``<timestamp>`` and the other ``<timestamp>-2``.
    """
    explicit = explicit_run_id(env)
    if explicit is not None:
        return explicit
    base = run_id(env, now)
    root.mkdir(parents=True, exist_ok=True)
    for n in range(1, _MAX_CLAIMS + 1):
        candidate = base if n == 1 else f"{base}-{n}"
        try:
            (root / candidate).mkdir()
        except FileExistsError:
            continue
        return candidate
    raise FileExistsError(f"{root}: {_MAX_CLAIMS} run folders named {base}* already exist")
