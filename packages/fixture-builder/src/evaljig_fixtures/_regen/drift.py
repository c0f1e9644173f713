"""Byte-for-byte comparison of a rebuilt fixtures folder with the committed one, and its listing.

``added``: in the committed folder but not rebuilt; ``missing``: rebuilt but not committed;
``changed``: both, with different bytes. Text gets a short unified diff, binaries size + sha256.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_DIFF_LINES = 40


@dataclass(frozen=True, slots=True)
class Drift:
    kind: str  # "added" | "missing" | "changed"
    path: str
    committed: bytes | None
    rebuilt: bytes | None


def list_files(root: Path) -> set[str]:
    """Relative POSIX paths of every file under ``root`` (empty when it does not exist)."""
    if not root.is_dir():
        return set()
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def read(root: Path, relative: str) -> bytes | None:
    path = root.joinpath(*PurePosixPath(relative).parts)
    return path.read_bytes() if path.is_file() else None


def compare(relative: str, committed: bytes | None, rebuilt: bytes | None) -> Drift | None:
    if committed == rebuilt:
        return None
    kind = "missing" if committed is None else "added" if rebuilt is None else "changed"
    return Drift(kind, relative, committed, rebuilt)


def _fingerprint(data: bytes) -> str:
    return f"{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}"


def _text(data: bytes) -> str | None:
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _zip_members(data: bytes) -> dict[str, int] | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return {i.filename: i.CRC for i in archive.infolist()}
    except (zipfile.BadZipFile, ValueError):
        return None


def render(drift: Drift) -> list[str]:
    """The listing lines for one drifted file."""
    if drift.kind == "added":
        assert drift.committed is not None
        return [f"added    {drift.path}  (committed, but no builder produces it: {_fingerprint(drift.committed)})"]
    if drift.kind == "missing":
        assert drift.rebuilt is not None
        return [f"missing  {drift.path}  (rebuilt, but not in the committed folder: {_fingerprint(drift.rebuilt)})"]
    assert drift.committed is not None
    assert drift.rebuilt is not None
    lines = [f"changed  {drift.path}"]
    old, new = _text(drift.committed), _text(drift.rebuilt)
    if old is not None and new is not None:
        diff = list(
            difflib.unified_diff(
                old.splitlines(), new.splitlines(), f"committed/{drift.path}", f"rebuilt/{drift.path}", lineterm=""
            )
        )
        lines += [f"  {line}" for line in diff[:MAX_DIFF_LINES]]
        if len(diff) > MAX_DIFF_LINES:
            lines.append(f"  ... {len(diff) - MAX_DIFF_LINES} more diff lines")
        return lines
    lines += [f"  committed: {_fingerprint(drift.committed)}", f"  rebuilt:   {_fingerprint(drift.rebuilt)}"]
    old_members, new_members = _zip_members(drift.committed), _zip_members(drift.rebuilt)
    if old_members is not None and new_members is not None:
        differ = sorted(n for n in old_members.keys() | new_members.keys() if old_members.get(n) != new_members.get(n))
        lines.append(f"  zip members that differ: {', '.join(differ) or 'none (only the zip encoding)'}")
    return lines
