"""The review: every changed golden, fixture, cassette and baseline, categorised, grouped, plus stale recordings.

Which files are reviewed (nothing else is ever listed, accepted or rejected):

- **golden**: under a golden folder (``_config``), or in a syrupy ``__snapshots__`` folder;
  grouped by test module (``<package>/<module>`` in evaljig's layout), one entry per test;
- **cassette**: a YAML recording with ``<name>.recorded-for.json`` beside it (that sidecar goes
  with it), or a vcrpy-layout YAML in a ``cassettes`` folder or a reviewed folder;
- **fixture**: under a fixtures folder; grouped by the builder that owns it (known from the
  build script), else by its first folder (``providers``, ``configs``, ...);
- **baseline**: a JSON file whose top level says ``"kind": "evaljig-baseline"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from evaljig_review import _cassettes, _semantic
from evaljig_review._config import ReviewConfig
from evaljig_review._git import Repo
from evaljig_review._semantic import Comparison
from evaljig_review._stale import (
    Found,
    Stale,
    fixture_builder_installed,
    load_build_script,
    looks_like_build_script,
    stale_recordings,
)

GOLDEN, FIXTURE, CASSETTE, BASELINE = "golden", "fixture", "cassette", "baseline"
KINDS = (GOLDEN, FIXTURE, CASSETTE, BASELINE)
BASELINE_KIND = "evaljig-baseline"
SNAPSHOTS = "__snapshots__"


@dataclass
class Entry:
    """One changed file: what it is, where it belongs, and how it changed."""

    path: str
    kind: str
    group: str
    item: str
    status: str
    comparison: Comparison

    @property
    def category(self) -> str:
        return self.comparison.category


@dataclass
class Review:
    root: Path
    base: str
    entries: list[Entry] = field(default_factory=list)
    stale: list[Stale] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {c: sum(1 for e in self.entries if e.category == c) for c in _semantic.CATEGORIES}

    def ordered(self) -> list[Entry]:
        """Most important first (value changes, then bytes, new, removed, reordered, format-only), then by path."""
        rank = {c: i for i, c in enumerate(_semantic.CATEGORIES)}
        return sorted(self.entries, key=lambda e: (rank[e.category], KINDS.index(e.kind), e.group, e.path))


def _under(path: str, folder: str) -> str | None:
    """``path`` relative to ``folder`` when inside it."""
    folder = folder.strip("/")
    if folder in ("", "."):
        return path
    return path[len(folder) + 1 :] if path.startswith(folder + "/") else None


def _is_baseline(data: bytes | None) -> bool:
    if data is None or b"evaljig-baseline" not in data:
        return False
    value = _semantic.value_of(data, ".json")
    return isinstance(value, dict) and value.get("kind") == BASELINE_KIND


def _looks_recorded(data: bytes | None, suffix: str) -> bool:
    return (
        data is not None and b"interactions" in data and _cassettes.is_cassette_value(_semantic.value_of(data, suffix))
    )


class _Classifier:
    def __init__(self, repo: Repo, config: ReviewConfig, found: Found) -> None:
        self.repo = repo
        self.golden = config.golden
        self.golden_names = config.golden_names
        self.sets = found.sets
        self.fixture_dirs = list(dict.fromkeys([*config.fixtures, *(self._rel(s.folder) for s in found.sets)]))

    def _rel(self, folder: Path) -> str:
        try:
            return folder.resolve().relative_to(self.repo.root.resolve()).as_posix()
        except ValueError:
            return folder.as_posix()

    def _builder(self, folder: str, inside: str) -> str | None:
        for fixture_set in self.sets:
            if self._rel(fixture_set.folder) == folder:
                return fixture_set.builder_of(inside)
        return None

    def classify(self, path: str, old: bytes | None, new: bytes | None) -> tuple[str, str, str] | None:
        """(kind, group, item) for a reviewed file; ``None`` for any other."""
        pure = PurePosixPath(path)
        suffix = pure.suffix.lower()
        in_fixtures = [(d, rest) for d in self.fixture_dirs if (rest := _under(path, d)) is not None]
        in_golden = [(d, rest) for d in self.golden if (rest := _under(path, d)) is not None]
        if path.endswith(_cassettes.SIDECAR_SUFFIX):
            return CASSETTE, _cassettes.cassette_of(path), pure.name
        if (
            suffix in (".yaml", ".yml")
            and (
                (self.repo.root / _cassettes.sidecar_of(path)).is_file()  # a sidecar in the working tree, or the base
                or self.repo.old_bytes(_cassettes.sidecar_of(path)) is not None
                or (
                    ("cassettes" in pure.parts[:-1] or in_fixtures or in_golden)
                    and (_looks_recorded(new, suffix) or _looks_recorded(old, suffix))
                )
            )
        ):
            return CASSETTE, path, pure.name
        if in_golden:
            inside = PurePosixPath(in_golden[0][1])
            return GOLDEN, inside.parent.as_posix() if inside.parent.parts else in_golden[0][0], pure.stem
        named = [i for i, part in enumerate(pure.parts[:-1]) if part in self.golden_names]
        if named and not in_fixtures:
            inside = PurePosixPath(*pure.parts[named[0] + 1 :])
            folder = PurePosixPath(*pure.parts[: named[0] + 1]).as_posix()
            return GOLDEN, inside.parent.as_posix() if inside.parent.parts else folder, pure.stem
        if SNAPSHOTS in pure.parts[:-1]:
            at = pure.parts.index(SNAPSHOTS)
            module = PurePosixPath(*pure.parts[:at], pure.stem).as_posix()
            return GOLDEN, module, pure.name
        if in_fixtures:
            folder, rest = in_fixtures[0]
            builder = self._builder(folder, rest)
            group = f"builder {builder}" if builder else PurePosixPath(rest).parts[0] if "/" in rest else folder
            return FIXTURE, group, rest
        if suffix == ".json" and (_is_baseline(new) or _is_baseline(old)):
            return BASELINE, path, pure.name
        return None


def discover_fixture_sets(repo: Repo, config: ReviewConfig) -> Found:
    """The fixture sets the build scripts declare, their stale recordings, and notes on scripts that failed."""
    found = Found()
    scripts = config.build_scripts
    if scripts is None:
        scripts = tuple(p for p in repo.files() if _candidate(repo.root / p, p))
    if scripts and not fixture_builder_installed():
        found.notes.append(
            f"build scripts not read ({', '.join(scripts)}): evaljig-fixtures is not installed here, so no builder"
            " groups and no stale-recording check (pip install evaljig-fixtures)"
        )
        return found
    for script in scripts:
        try:
            fixture_set = load_build_script(repo.root, script)
        except ValueError as exc:
            found.notes.append(f"build script {exc}")
            continue
        found.sets.append(fixture_set)
        stale, notes = stale_recordings(fixture_set, repo.root)
        found.stale += stale
        found.notes += notes
    return found


def _candidate(path: Path, relative: str) -> bool:
    name = PurePosixPath(relative).name
    if not name.endswith(".py") or name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
        return False
    try:
        return path.is_file() and path.stat().st_size < 1_000_000 and looks_like_build_script(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError):
        return False


def compare_file(kind: str, path: str, old: bytes | None, new: bytes | None) -> Comparison:
    suffix = PurePosixPath(path).suffix
    compared = _semantic.compare(old, new, suffix, deltas=kind == BASELINE)
    if kind == CASSETTE and not path.endswith(_cassettes.SIDECAR_SUFFIX):
        compared = _cassettes.cassette_comparison(old, new, compared, suffix)
    return compared


def build_review(repo: Repo, config: ReviewConfig, *, scripts: bool = True) -> Review:
    """Compare the working tree with ``repo.base``: every reviewed file that changed, and the stale recordings."""
    found = discover_fixture_sets(repo, config) if scripts else Found()
    classifier = _Classifier(repo, config, found)
    review = Review(repo.root, repo.base, stale=sorted(found.stale, key=lambda s: s.path), notes=found.notes)
    for status, path in repo.changed():
        old = repo.old_bytes(path) if status != "added" else None
        new = repo.new_bytes(path)
        if old == new:
            continue  # a mode change, or staged and then restored
        where = classifier.classify(path, old, new)
        if where is None:
            continue
        kind, group, item = where
        review.entries.append(Entry(path, kind, group, item, status, compare_file(kind, path, old, new)))
    return review


def as_data(review: Review) -> dict[str, Any]:
    """The review as plain, stably ordered data (``--json``)."""
    return {
        "format": "evaljig-review/1",
        "base": review.base,
        "counts": review.counts(),
        "entries": [
            {
                "path": e.path,
                "kind": e.kind,
                "group": e.group,
                "item": e.item,
                "status": e.status,
                "category": e.category,
                "changes": [c.text() for c in e.comparison.changes],
                "exchanges": [
                    {"status": x.status, "request": x.request, "changes": [c.text() for c in x.changes]}
                    for x in e.comparison.exchanges
                ],
                "omitted": e.comparison.omitted,
                "note": e.comparison.note,
            }
            for e in sorted(review.entries, key=lambda e: e.path)
        ],
        "stale": [{"path": s.path, "builder": s.builder, "text": s.text} for s in review.stale],
        "notes": sorted(review.notes),
    }
