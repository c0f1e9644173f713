"""A gateway's cassette options, checked together, and the write when it stops.

``--replay`` and ``--record`` are exclusive; recording (``--record``, or ``--on-miss record``
during a replay) needs an ``--upstream``, and ``--api-key-env`` only means something with one.
Every bad combination is refused before the server starts, with the flags named, and so is a
cassette path that cannot be written (a folder, a read-only place): before any upstream call
is paid for.

Several recorders may share one cassette (one server per xdist worker, two shells): the write
takes an exclusive lock (``flock`` on the cassette's folder, so no lock file is left behind),
re-reads the cassette if it changed since this recorder loaded it, and merges. The cassette is
the replayed part as loaded, then every appended exchange sorted by request (identical
requests keep their recorded order), so the result does not depend on which recorder stopped
last.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from evaljig_common import exclusive_lock
from evaljig_gateway._cassette import (
    DEFAULT_IGNORED_FIELDS,
    DEFAULT_MAX_CASSETTE_BYTES,
    CassetteError,
    Item,
    load_cassette,
    match_key,
    read_items,
    request_json,
    write_items,
)
from evaljig_gateway._record import Recorder
from evaljig_gateway._replay import Replayer

OnMiss = Literal["error", "record"]
ON_MISS: tuple[OnMiss, ...] = ("error", "record")
#: What identifies one version of a file: an atomic write makes a new inode.
Identity = tuple[int, int, int, int] | None


@dataclass
class Tape:
    """The cassette a gateway replays from or records to, and how many exchanges it wrote at its last stop."""

    path: Path
    replayer: Replayer | None
    recorder: Recorder | None
    max_bytes: int
    ignore: frozenset[str]
    base: list[Item] = field(default_factory=list)
    """The replayed cassette as loaded (kept only when misses are recorded): the head of what is written."""
    identity: Identity = None
    """The cassette file as this tape last read or wrote it; another version means another recorder wrote."""
    written: int = 0

    def finish(self) -> None:
        """Write what was recorded (atomically, after the secret scan, merged with what other recorders
        wrote meanwhile); ``written`` counts this recorder's new exchanges. Nothing recorded: nothing written."""
        if self.recorder is None or not self.recorder.recorded:
            return
        new = list(self.recorder.recorded)
        with exclusive_lock(self.path.parent):  # every recorder of a cassette there, across processes
            base, appended = self.base, []
            if _identity(self.path) != self.identity:  # another recorder wrote since: merge with its exchanges
                current = read_items(self.path, self.max_bytes) if self.path.exists() else []
                if [e for e, _ in current[: len(base)]] == [e for e, _ in base]:
                    appended = current[len(base) :]
                else:  # the cassette was replaced (re-recorded) meanwhile: it is the head now
                    base = current
            items = [*base, *sorted([*appended, *new], key=self._order)]
            write_items(self.path, items, secrets=self.recorder.secrets(), max_bytes=self.max_bytes)
            self.identity = _identity(self.path)
        self.recorder.recorded.clear()
        self.base = items  # a later stop of this gateway (started again) keeps what this one wrote
        self.written = len(new)

    def _order(self, item: Item) -> tuple[str, str, bytes]:
        exchange, _ = item
        return match_key(exchange.method, exchange.path, request_json(exchange.request_body), self.ignore)


def _identity(path: Path) -> Identity:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def check_writable(path: Path) -> None:
    """Refuse, before anything is recorded, a cassette path the stop could not write."""
    if path.is_dir():
        raise CassetteError(f"{path}: cannot record to this path: it is a folder")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(prefix=f".{path.name[:100]}.", suffix=".probe", dir=path.parent):
            pass  # created and removed: the stop's atomic write can create its file there
    except OSError as exc:
        reason = f"cannot create a file in {path.parent} ({exc.strerror or exc})"
        raise CassetteError(f"{path}: cannot record to this path: {reason}") from None


@dataclass(frozen=True)
class Replay:
    """``Gateway(tape=Replay(path))``: answer API requests from the cassette at ``path``.

    A request it does not hold is a 404 naming the closest recording (``on_miss="error"``), or, with
    ``on_miss="record"`` and an ``upstream``, is forwarded there and recorded into the cassette.
    ``ignore_fields`` are the request body fields matching ignores (default ``DEFAULT_IGNORED_FIELDS``).
    """

    path: Path
    on_miss: OnMiss = "error"
    upstream: str | None = None
    api_key_env: str | None = None
    ignore_fields: Iterable[str] | None = None
    max_cassette_bytes: int = DEFAULT_MAX_CASSETTE_BYTES


@dataclass(frozen=True)
class Record:
    """``Gateway(tape=Record(path, upstream=url))``: forward every API request to ``upstream`` (its key read
    from the environment variable ``api_key_env``) and write the cassette at ``path`` when the gateway stops."""

    path: Path
    upstream: str
    api_key_env: str | None = None
    ignore_fields: Iterable[str] | None = None
    max_cassette_bytes: int = DEFAULT_MAX_CASSETTE_BYTES


def check_flags(
    replay: bool, record: bool, upstream: str | None, api_key_env: str | None, on_miss: str, max_cassette_bytes: int
) -> None:
    """Refuse a bad combination of the ``serve`` tape flags (``replay``, ``record``: whether each was given),
    naming the flags; a ``Replay`` or ``Record`` is checked as the flags it stands for."""
    if on_miss not in ON_MISS:
        raise ValueError(f"--on-miss must be 'error' or 'record', got {on_miss!r}")
    if max_cassette_bytes < 1:
        raise ValueError(f"--max-cassette-bytes must be at least 1, got {max_cassette_bytes}")
    if replay and record:
        raise ValueError("--replay and --record cannot be combined: record a cassette first, then replay it")
    if record and upstream is None:
        raise ValueError("--record needs --upstream URL (the OpenAI-compatible server to record from)")
    if on_miss == "record" and (not replay or upstream is None):
        raise ValueError("--on-miss record needs --replay CASSETTE and --upstream URL (where misses are recorded from)")
    if upstream is not None and not record and on_miss != "record":
        raise ValueError("--upstream is only used to record: add --record CASSETTE, or --replay with --on-miss record")
    if api_key_env is not None and upstream is None:
        raise ValueError("--api-key-env is only used with --upstream")


def open_tape(options: Replay | Record | None) -> Tape | None:
    """Check the options, load the cassette to replay; None for a plain (synthetic) gateway."""
    if options is None:
        return None
    replaying = isinstance(options, Replay)
    path, upstream, max_bytes = options.path, options.upstream, options.max_cassette_bytes
    on_miss = options.on_miss if isinstance(options, Replay) else "error"
    check_flags(replaying, not replaying, upstream, options.api_key_env, on_miss, max_bytes)
    ignore = frozenset(options.ignore_fields) if options.ignore_fields is not None else DEFAULT_IGNORED_FIELDS
    if upstream is None:  # replay only: the exchanges go into the replayer and nothing else keeps them
        return Tape(path, Replayer(load_cassette(path, max_bytes), ignore), None, max_bytes, ignore)
    recorder = Recorder(upstream, api_key_env=options.api_key_env, max_answer_bytes=max_bytes)
    check_writable(path)
    identity = _identity(path)
    if not replaying:
        return Tape(path, None, recorder, max_bytes, ignore, identity=identity)
    base = read_items(path, max_bytes)
    return Tape(path, Replayer([e for e, _ in base], ignore), recorder, max_bytes, ignore, base, identity)
