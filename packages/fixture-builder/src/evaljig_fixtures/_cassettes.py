"""Replay a cassette in-process with vcrpy: any request not in it, or changed by a byte, raises.

Cassettes are recorded by the gateway (``Gateway(tape=Record(...))``, ``cassette_builder``), whose
format vcrpy reads: every URI under :data:`CANONICAL_BASE_URL`, no credential headers.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import vcr
from vcr.cassette import Cassette

MATCH_ON = ("method", "scheme", "host", "port", "path", "query", "body")


def replaying(path: Path) -> contextlib.AbstractContextManager[Cassette]:
    """Play ``path`` back; any request not in it (or changed by a byte) raises."""
    player = vcr.VCR(record_mode="none", match_on=MATCH_ON)  # each recorded call plays once
    return player.use_cassette(str(path))  # type: ignore[no-any-return]
