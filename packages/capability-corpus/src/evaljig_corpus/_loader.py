"""The packaged corpus: list, load and validate fixtures through ``importlib.resources``.

The public names follow the WorldForge capability-corpus design (``CAPABILITY_FIXTURE_NAMES`` is
the tuple of capabilities, ``list_fixture_names`` the sorted file stems); ``validate_corpus(path)``
also checks a provider author's own corpus folder. The ``*_at`` functions take any corpus folder
(a ``Traversable`` or ``Path``) so the rules can be tested on a deliberately broken copy.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from types import MappingProxyType
from typing import SupportsIndex, overload

from evaljig_corpus._errors import FixtureError
from evaljig_corpus._fixture import BASELINE, CAPABILITIES, CapabilityFixture, name_problem, parse_fixture

CHARTER = "README.md"
_SUFFIX = ".json"


def corpus_root() -> Traversable:
    """The corpus folder inside the installed package (a wheel, an sdist install or an editable checkout)."""
    return files("evaljig_corpus").joinpath("corpus")


def _root(corpus: Path | str | None) -> Traversable:
    """The packaged corpus, or the folder ``corpus`` (which must exist: a typo never reads as "no fixtures")."""
    if corpus is None:
        return corpus_root()
    folder = Path(corpus)
    if not folder.is_dir():
        raise FixtureError([f"{folder}: the corpus folder is missing"])
    return folder


def list_fixture_names(capability: str, *, corpus: Path | str | None = None) -> tuple[str, ...]:
    """The sorted fixture names (file stems) of a capability, as in the source design.

    Sorted plainly, so ``valid_baseline`` comes after the ``invalid_*`` names; the iterators and
    ``validate_corpus`` give the baseline first. ``corpus``: a corpus folder of your own instead of
    the packaged one (as for every loader here).
    """
    return tuple(sorted(list_fixture_names_at(_root(corpus), capability)))


def load_capability_fixture(capability: str, name: str, *, corpus: Path | str | None = None) -> CapabilityFixture:
    """One fixture, validated; raises ``FixtureError`` naming the file and every problem in it."""
    return load_capability_fixture_at(_root(corpus), capability, name)


def iter_capability_fixtures(capability: str, *, corpus: Path | str | None = None) -> Iterator[CapabilityFixture]:
    """Every fixture of one capability: the baseline first, then the invalid ones sorted."""
    root = _root(corpus)
    for name in list_fixture_names_at(root, capability):
        yield load_capability_fixture_at(root, capability, name)


def iter_all_fixtures(*, corpus: Path | str | None = None) -> Iterator[CapabilityFixture]:
    """Every fixture of every capability, in corpus order (a folder of your own may hold only some)."""
    root = _root(corpus)
    for capability in CAPABILITIES:
        for name in list_fixture_names_at(root, capability):
            yield load_capability_fixture_at(root, capability, name)


def validate_corpus(
    path: Path | str | None = None, *, corpus: Path | str | None = None
) -> tuple[CapabilityFixture, ...]:
    """Check a corpus: the packaged one, or the folder at ``path`` or ``corpus`` (a provider author's own).

    One ``FixtureError`` lists every problem, each prefixed with its file. The packaged corpus
    must cover every capability and keep its charter; a folder of your own holds the capability
    folders you support (at least one), each under the same rules. ``corpus=`` is the keyword
    every loader takes; ``path`` stays for positional callers.
    """
    if path is not None and corpus is not None:
        raise TypeError("validate_corpus() takes path or corpus=, not both")
    folder = corpus if corpus is not None else path
    if folder is None:
        return validate_corpus_at(corpus_root())
    return validate_corpus_at(Path(folder), complete=False)


def _capability_folder(root: Traversable, capability: str) -> Traversable:
    if capability not in CAPABILITIES:
        raise FixtureError([f"unknown capability {capability!r}; known: {', '.join(CAPABILITIES)}"])
    return root.joinpath(capability)


def list_fixture_names_at(root: Traversable, capability: str) -> tuple[str, ...]:
    """``list_fixture_names`` for the corpus at ``root``."""
    folder = _capability_folder(root, capability)
    if not folder.is_dir():
        return ()
    stems = [e.name[: -len(_SUFFIX)] for e in folder.iterdir() if e.name.endswith(_SUFFIX) and e.is_file()]
    return tuple(sorted(stems, key=lambda s: (s != BASELINE, s)))


def load_capability_fixture_at(root: Traversable, capability: str, name: str) -> CapabilityFixture:
    """``load_capability_fixture`` for the corpus at ``root``; the name is checked before any path is built."""
    folder = _capability_folder(root, capability)
    problem = name_problem(name)
    if problem is not None:
        raise FixtureError([problem])
    source = folder.joinpath(name + _SUFFIX)
    where = f"{capability}/{name}{_SUFFIX}"
    if not source.is_file():
        known = ", ".join(list_fixture_names_at(root, capability)) or "none"
        raise FixtureError([f"{where}: no such fixture (known: {known})"])
    fixture, problems = _read(source, capability, name)
    if fixture is None:
        raise FixtureError([f"{where}: {p}" for p in problems], summary=f"{where} is not a valid fixture:")
    return fixture


def _read(source: Traversable, capability: str, name: str) -> tuple[CapabilityFixture | None, list[str]]:
    try:
        text = source.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return None, [f"not UTF-8: {exc}"]
    return parse_fixture(capability, name, text)


def validate_corpus_at(root: Traversable, *, complete: bool = True) -> tuple[CapabilityFixture, ...]:
    """``validate_corpus`` for the corpus at ``root``; ``complete=False``: capabilities and charter may be absent."""
    fixtures, problems = corpus_problems(root, complete=complete)
    if problems:
        summary = None if complete else f"{root}: fixture corpus has {len(problems)} problem(s):"
        raise FixtureError(problems, summary=summary)
    return tuple(fixtures)


def corpus_problems(root: Traversable, *, complete: bool = True) -> tuple[list[CapabilityFixture], list[str]]:
    """Every fixture that loads, and every problem found, in corpus order."""
    if not root.is_dir():
        return [], [f"{root}: the corpus folder is missing"]
    problems: list[str] = []
    fixtures: list[CapabilityFixture] = []
    entries = {e.name: e for e in root.iterdir()}
    if complete and (CHARTER not in entries or not entries[CHARTER].is_file()):
        problems.append(f"{CHARTER}: the contributor charter is missing")
    for name in sorted(set(entries) - {CHARTER, *CAPABILITIES}):
        problems.append(f"{name}: not a capability folder (known: {', '.join(CAPABILITIES)})")
    if not complete and not any(c in entries for c in CAPABILITIES):
        problems.append(f"no capability folder (one or more of: {', '.join(CAPABILITIES)})")
    declared: dict[str, list[str]] = {}
    for capability in CAPABILITIES:
        folder = entries.get(capability)
        if folder is None and not complete:
            continue  # a provider's own corpus covers the capabilities it supports
        if folder is None or not folder.is_dir():
            problems.append(f"{capability}/: the capability folder is missing")
            continue
        found, folder_problems = _folder_problems(folder, capability, declared)
        fixtures += found
        problems += folder_problems
    for claimed, wheres in declared.items():
        for where in wheres if len(wheres) > 1 else ():
            others = ", ".join(w for w in wheres if w != where)
            problems.append(f"{where}: id {claimed!r} is also claimed by {others}")
    return fixtures, problems


def _folder_problems(
    folder: Traversable, capability: str, declared: dict[str, list[str]]
) -> tuple[list[CapabilityFixture], list[str]]:
    problems: list[str] = []
    fixtures: list[CapabilityFixture] = []
    baselines = invalid = 0
    patterns: dict[str, str] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: (e.name != BASELINE + _SUFFIX, e.name)):
        where = f"{capability}/{entry.name}"
        stem = entry.name[: -len(_SUFFIX)] if entry.name.endswith(_SUFFIX) else None
        bad_name = name_problem(stem) if stem is not None else None
        if stem is None or bad_name is not None or not entry.is_file():
            problems.append(
                f"{where}: only {BASELINE}.json and invalid_<reason>.json files belong in a capability folder"
            )
            continue
        baselines += stem == BASELINE
        invalid += stem != BASELINE
        fixture, file_problems = _read(entry, capability, stem)
        problems += [f"{where}: {p}" for p in file_problems]
        claimed = fixture.id if fixture is not None else _declared_id(entry)
        if claimed is not None:
            declared.setdefault(claimed, []).append(where)
        if fixture is None:
            continue
        fixtures.append(fixture)
        if fixture.expected_error_pattern is not None:
            if fixture.expected_error_pattern in patterns:
                problems.append(
                    f"{where}: expected_error_pattern repeats {patterns[fixture.expected_error_pattern]}'s;"
                    " each invalid fixture names a distinct failure"
                )
            patterns.setdefault(fixture.expected_error_pattern, where)
    if baselines != 1:
        problems.append(f"{capability}/: needs exactly one {BASELINE}.json, found {baselines}")
    if invalid < 2:
        problems.append(f"{capability}/: needs at least two invalid_<reason>.json fixtures, found {invalid}")
    return fixtures, problems


def _declared_id(entry: Traversable) -> str | None:
    """The ``id`` a file that failed validation claims, read leniently (plain ``json``: a repeated key or a
    ``NaN`` elsewhere must not hide it), so duplicates are found even in otherwise broken files."""
    try:
        data = json.loads(entry.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    value = data.get("id") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


class CapabilityNames(tuple[str, ...]):
    """The capability names in corpus order (the source design's ``CAPABILITY_FIXTURE_NAMES``).

    Indexing by a capability name still gives its fixture names, as evaljig's earlier mapping did:
    ``CAPABILITY_FIXTURE_NAMES["chat"]`` is ``FIXTURE_NAMES["chat"]`` (baseline first).
    """

    __slots__ = ()

    @overload
    def __getitem__(self, key: SupportsIndex) -> str: ...
    @overload
    def __getitem__(self, key: slice) -> tuple[str, ...]: ...
    @overload
    def __getitem__(self, key: str) -> tuple[str, ...]: ...
    def __getitem__(self, key: SupportsIndex | slice | str) -> str | tuple[str, ...]:
        if isinstance(key, str):
            return FIXTURE_NAMES[key] if key in FIXTURE_NAMES else list_fixture_names_at(corpus_root(), key)
        return tuple.__getitem__(self, key)


#: Capabilities covered by the corpus, in corpus order: ``("chat", "completion", ..., "models")``.
CAPABILITY_FIXTURE_NAMES = CapabilityNames(CAPABILITIES)

#: Capability -> its fixture names in the installed corpus, the baseline first, then the invalid ones sorted.
FIXTURE_NAMES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {capability: list_fixture_names_at(corpus_root(), capability) for capability in CAPABILITIES}
)
