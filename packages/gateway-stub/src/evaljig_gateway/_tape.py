"""A gateway's cassette options, checked together, and the one write when it stops.

``--replay`` and ``--record`` are exclusive; recording (``--record``, or ``--on-miss record``
during a replay) needs an ``--upstream``, and ``--api-key-env`` only means something with one.
Every bad combination is refused before the server starts, with the flags named.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from evaljig_gateway._cassette import (
    DEFAULT_IGNORED_FIELDS,
    Exchange,
    load_cassette,
    loads_json,
    match_key,
    write_cassette,
)
from evaljig_gateway._record import Recorder
from evaljig_gateway._replay import Replayer

OnMiss = Literal["error", "record"]
ON_MISS: tuple[OnMiss, ...] = ("error", "record")


@dataclass
class Tape:
    """The cassette a gateway replays from or records to, and how many exchanges it wrote at its last stop."""

    path: Path
    replayer: Replayer | None
    recorder: Recorder | None
    max_bytes: int
    ignore: frozenset[str]
    loaded: list[Exchange] = field(default_factory=list)
    written: int = 0

    def finish(self) -> int:
        """Write what was recorded (once, atomically, after the secret scan); the number of new exchanges.

        Recording: the cassette is the new exchanges, sorted by request (identical requests keep their
        order), so concurrency does not reorder a re-record. ``--on-miss record``: the replayed
        cassette, then the new exchanges. Nothing recorded: the file is left as it was.
        """
        if self.recorder is None or not self.recorder.recorded:
            return 0
        new = sorted(self.recorder.recorded, key=self._order)
        exchanges = [*self.loaded, *new] if self.replayer is not None else new
        write_cassette(self.path, exchanges, secrets=self.recorder.secrets(), max_bytes=self.max_bytes)
        self.recorder.recorded.clear()
        self.loaded = exchanges
        self.written = len(new)
        return len(new)

    def _order(self, exchange: Exchange) -> tuple[str, str, bytes]:
        body = loads_json(exchange.request_body) if exchange.request_body.strip() else None
        return match_key(exchange.method, exchange.path, body, self.ignore)


def open_tape(
    *,
    replay: Path | None,
    record: Path | None,
    upstream: str | None,
    api_key_env: str | None,
    on_miss: str,
    ignore_fields: Iterable[str] | None,
    max_cassette_bytes: int,
) -> Tape | None:
    """Check the options together, load the cassette to replay; None for a plain (synthetic) gateway."""
    if on_miss not in ON_MISS:
        raise ValueError(f"--on-miss must be 'error' or 'record', got {on_miss!r}")
    if max_cassette_bytes < 1:
        raise ValueError(f"--max-cassette-bytes must be at least 1, got {max_cassette_bytes}")
    if replay is not None and record is not None:
        raise ValueError("--replay and --record cannot be combined: record a cassette first, then replay it")
    if record is not None and upstream is None:
        raise ValueError("--record needs --upstream URL (the OpenAI-compatible server to record from)")
    if on_miss == "record" and (replay is None or upstream is None):
        raise ValueError("--on-miss record needs --replay CASSETTE and --upstream URL (where misses are recorded from)")
    if upstream is not None and record is None and on_miss != "record":
        raise ValueError("--upstream is only used to record: add --record CASSETTE, or --replay with --on-miss record")
    if api_key_env is not None and upstream is None:
        raise ValueError("--api-key-env is only used with --upstream")
    ignore = frozenset(ignore_fields) if ignore_fields is not None else DEFAULT_IGNORED_FIELDS
    recorder = Recorder(upstream, api_key_env=api_key_env) if upstream is not None else None
    if record is not None:
        return Tape(record, None, recorder, max_cassette_bytes, ignore)
    if replay is None:
        return None
    loaded = load_cassette(replay, max_cassette_bytes)
    return Tape(replay, Replayer(loaded, ignore), recorder, max_cassette_bytes, ignore, loaded)
