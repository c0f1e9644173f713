"""Recorded cassettes: replaying one in-process, and what it was recorded *for*, so a stale one is found early.

Cassettes are recorded by the gateway (``Gateway(tape=Record(...))``, ``cassette_builder``), whose
format vcrpy reads: every URI under :data:`CANONICAL_BASE_URL`, no credential headers.
``replaying`` plays one back with vcrpy (loaded on first use: the LEV plugin imports this module
into every session); any request not in it, or changed by a byte, raises.

A replayed cassette only fails when a request misses, which is after lighteval has imported and
run (a minute), and then as an empty answer. But the requests are shaped by a handful of inputs
evaljig knows without running anything: the model, the generation parameters as rendered into
the config, the system prompt, the dataset's rows, the task module and the lighteval version. The
cassette builder writes them beside the cassette (``<name>.recorded-for.json``, canonical JSON, so
a rebuild gives the same bytes), and ``regen --check`` and the LEV harness recompute them from the
current provider and dataset and name every input that changed, by path
(``generation_parameters.temperature 0.0 → 0.3``). Fields the replay ignores (``--match-ignore``)
are left out here too: what does not change the match does not make a recording stale.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from evaljig_config import ProviderSpec
from evaljig_fixtures._dataset_load import DatasetPackage, canonical_json

if TYPE_CHECKING:
    from vcr.cassette import Cassette

#: What a replay matches on: a request that differs in any of these (the body by a byte) is not in the cassette.
MATCH_ON = ("method", "scheme", "host", "port", "path", "query", "body")


def replaying(path: Path) -> contextlib.AbstractContextManager[Cassette]:
    """Play ``path`` back; any request not in it (or changed by a byte) raises."""
    import vcr

    player = vcr.VCR(record_mode="none", match_on=MATCH_ON)  # each recorded call plays once
    return player.use_cassette(str(path))  # type: ignore[no-any-return]


# --- ``<name>.recorded-for.json``: the inputs a recording was made for, and which of them changed since.
RECORDED_FOR_FORMAT = "evaljig-recorded-for/1"
RECORDED_FOR_SUFFIX = ".recorded-for.json"
#: Fields left out of the comparison: bookkeeping, not inputs.
_NOT_INPUTS = frozenset({"format", "requests", "builder"})
#: Request fields (what ``--match-ignore`` names) that a recorded input becomes, where the names differ.
_REQUEST_FIELDS: Mapping[str, frozenset[str]] = {
    "max_new_tokens": frozenset({"max_tokens", "max_completion_tokens"}),
    "stop_tokens": frozenset({"stop"}),
    "system_prompt": frozenset({"messages"}),
}
ABSENT = "(absent)"
UNKNOWN = "recorded for unknown inputs; re-record to enable staleness checks"


def sidecar_path(cassette: Path) -> Path:
    """``cassettes/acme.yaml`` -> ``cassettes/acme.recorded-for.json``."""
    return cassette.with_name(cassette.name.rsplit(".", 1)[0] + RECORDED_FOR_SUFFIX)


def sidecar_relative(relative: str) -> str:
    """The same for a path relative to the fixtures folder (a builder's output)."""
    pure = PurePosixPath(relative)
    return pure.with_name(pure.name.rsplit(".", 1)[0] + RECORDED_FOR_SUFFIX).as_posix()


def lighteval_version() -> str | None:
    """The installed lighteval's version, read from its metadata (lighteval itself is never imported)."""
    try:
        return importlib.metadata.version("lighteval")
    except importlib.metadata.PackageNotFoundError:
        return None


def recorded_for(
    spec: ProviderSpec, package: DatasetPackage, *, requests: int | None = None, builder: str | None = None
) -> dict[str, Any]:
    """The inputs that shape a recording's requests, in a fixed order (``requests``: how many it holds)."""
    member = package.task_module
    summary: dict[str, Any] = {
        "format": RECORDED_FOR_FORMAT,
        "model": spec.model,
        "generation_parameters": spec.generation.model_dump(exclude_none=True),
        "system_prompt": spec.system_prompt,
        "dataset": {
            "name": package.name,
            "task_spec": package.task_spec,
            "rows_sha256": hashlib.sha256(package.members["test.jsonl"]).hexdigest(),
        },
        "task_module_sha256": hashlib.sha256(package.members[member]).hexdigest(),
        "lighteval": lighteval_version(),
    }
    if requests is not None:
        summary["requests"] = requests
    if builder is not None:
        summary["builder"] = builder
    return summary


def dump_recorded_for(summary: Mapping[str, Any]) -> bytes:
    return canonical_json(dict(summary))


def load_recorded_for(path: Path) -> dict[str, Any] | None:
    """The sidecar's summary; ``None`` when there is none or it is not one (an older recording)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == RECORDED_FOR_FORMAT else None


def _flatten(value: Any, path: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{path}.{key}" if path else str(key), out)
    else:
        out[path] = value


def _shown(value: Any) -> str:
    if value is None:
        return ABSENT
    if isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        return f"sha256 {value[:12]}…"  # a digest: enough to tell two apart
    return json.dumps(value, ensure_ascii=False)


def _ignored(path: str, ignore: frozenset[str]) -> bool:
    leaf = path.rsplit(".", 1)[-1]
    return path in ignore or leaf in ignore or bool(_REQUEST_FIELDS.get(leaf, frozenset()) & ignore)


def stale_fields(recorded: Mapping[str, Any], current: Mapping[str, Any], ignore: frozenset[str]) -> list[str]:
    """``path old → new`` for each input that differs (by path, in the recorded order), ignored fields left out.

    An input the current side cannot know (lighteval not installed here: ``None``) is not compared.
    """
    old: dict[str, Any] = {}
    new: dict[str, Any] = {}
    _flatten({k: v for k, v in recorded.items() if k not in _NOT_INPUTS}, "", old)
    _flatten({k: v for k, v in current.items() if k not in _NOT_INPUTS}, "", new)
    lines = []
    for path in dict.fromkeys([*old, *new]):
        before, after = old.get(path), new.get(path)
        if before == after or _ignored(path, ignore) or (path == "lighteval" and after is None):
            continue
        if isinstance(before, int | float) and isinstance(after, int | float) and float(before) == float(after):
            continue
        lines.append(f"{path} {_shown(before)} → {_shown(after)}")
    return lines


def stale_message(recorded: Mapping[str, Any], fields: list[str], rerecord: str) -> str:
    """``12 recorded requests: generation_parameters.temperature 0.0 → 0.3; re-record: <command>``."""
    count = recorded.get("requests")
    what = f"{count} recorded requests" if isinstance(count, int) else "the recorded requests"
    return f"{what}: {', '.join(fields)}; re-record: {rerecord}"
