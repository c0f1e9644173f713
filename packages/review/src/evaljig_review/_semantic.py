"""What changed between two versions of one file, as a reviewer wants it said.

Every changed file gets one category:

``new`` / ``removed``
    only one side has the file;
``value-changed``
    the parsed values differ: the one category that changes what a test asserts, listed first;
``format-only``
    the same parsed value in other bytes (quoting, indentation, line endings, trailing spaces);
``reordered``
    the same keys and items in another order only (no key or item added, removed or changed);
``bytes-changed``
    neither side could be parsed (binary, or not what its extension says): only the bytes differ.

A zip (a dataset package) is compared by member, a ``.jsonl`` member by row and key.

Structured files (``.yaml``/``.yml`` and ``.json``, read by evaljig-common's strict readers: a
repeated key, an alias or nesting over ``MAX_DEPTH`` leaves a file to the line diff) are compared
by key path (``model_parameters.temperature: 0.0 → 0.3``); a lighteval results table (a golden CLI
stdout) by ``task|metric`` with the score delta; other text by line.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import io
import json
import math
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from evaljig_common import StrictYAMLError, loads_strict, loads_yaml_strict

NEW, REMOVED, VALUE, BYTES, FORMAT, REORDERED = (
    "new",
    "removed",
    "value-changed",
    "bytes-changed",
    "format-only",
    "reordered",
)
#: Most important first: what a reviewer must read, then what only moved bytes.
CATEGORIES = (VALUE, BYTES, NEW, REMOVED, REORDERED, FORMAT)
#: At most this many key-path lines per file (the rest is counted).
MAX_CHANGES = 200
#: Larger files are compared as bytes only (a 256 MB cassette is a re-record to open, not to parse here).
MAX_PARSE_BYTES = 64 * 1024 * 1024
ABSENT = "(absent)"
_MISSING = object()


@dataclass
class Change:
    """One difference: a key path and the value on each side (``None`` side: absent)."""

    path: str
    old: str | None
    new: str | None
    delta: str | None = None

    def text(self) -> str:
        old = self.old if self.old is not None else ABSENT
        line = f"{self.path}: {old} → {self.new if self.new is not None else ABSENT}"
        return f"{line} ({self.delta})" if self.delta else line


@dataclass
class Exchange:
    """One cassette exchange the review says something about: ``status`` new / removed / answer-changed."""

    status: str
    request: str
    changes: list[Change] = field(default_factory=list)


@dataclass
class Comparison:
    """A file's category and what supports it."""

    category: str
    changes: list[Change] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)
    omitted: int = 0
    note: str = ""


def shown(value: Any) -> str:
    """A scalar or small structure as one short line (JSON, long text cut)."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=False, default=str)
    return text if len(text) <= 120 else text[:117] + "…"


def _key(path: str, key: Any) -> str:
    """``a.b`` for plain keys, ``a["odd key"]`` otherwise."""
    key = str(key)
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _ordered(value: Any) -> str:
    return json.dumps(value, sort_keys=False, ensure_ascii=False, default=str)


def _normalised(value: Any) -> Any:
    """Order-free form: dict keys sorted, list items sorted by their canonical text."""
    if isinstance(value, dict):
        return {str(k): _normalised(v) for k, v in value.items()}
    if isinstance(value, list):
        return sorted((_normalised(v) for v in value), key=_canonical)
    return value


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _delta(old: Any, new: Any) -> str | None:
    a, b = _number(old), _number(new)
    if a is None or b is None or math.isnan(a) or math.isnan(b):
        return None
    return f"{b - a:+.4g}"


def diff_values(old: Any, new: Any, path: str = "", *, deltas: bool = False) -> Iterator[Change]:
    """Key-path changes from ``old`` to ``new`` (dicts by key, lists aligned by item, scalars by value)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in dict.fromkeys([*old, *new]):
            sub = _key(path, key)
            if key not in new:
                yield Change(sub, shown(old[key]), None)
            elif key not in old:
                yield Change(sub, None, shown(new[key]))
            elif _canonical(old[key]) != _canonical(new[key]):
                yield from diff_values(old[key], new[key], sub, deltas=deltas)
        return
    if isinstance(old, list) and isinstance(new, list):
        matcher = difflib.SequenceMatcher(None, [_canonical(v) for v in old], [_canonical(v) for v in new], False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            if tag == "replace" and i2 - i1 == j2 - j1:
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    yield from diff_values(old[i], new[j], f"{path}[{j}]", deltas=deltas)
                continue
            for i in range(i1, i2):
                yield Change(f"{path}[{i}]", shown(old[i]), None)
            for j in range(j1, j2):
                yield Change(f"{path}[{j}]", None, shown(new[j]))
        return
    if _canonical(old) != _canonical(new):
        yield Change(path or "(value)", shown(old), shown(new), _delta(old, new) if deltas else None)


def _limited(changes: Iterator[Change]) -> tuple[list[Change], int]:
    kept: list[Change] = []
    extra = 0
    for change in changes:
        if len(kept) < MAX_CHANGES:
            kept.append(change)
        else:
            extra += 1
    return kept, extra


# -- parsing -------------------------------------------------------------------------------------------------------


class _Unparsed(Exception):  # noqa: N818 - private control flow, never raised out of this module
    """Not what its extension says (or binary)."""


def _text(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Unparsed from exc
    if "\0" in text:
        raise _Unparsed
    return text


#: Deeper YAML is not parsed (comparing it would recurse past Python's limit).
MAX_DEPTH = 100


def parse_structured(data: bytes, suffix: str) -> Any:
    """The parsed value of a YAML or JSON file (``_Unparsed`` when it is not one)."""
    if suffix == ".json":
        try:
            return loads_strict(data)
        except ValueError as exc:
            raise _Unparsed from exc
    if len(data) > MAX_PARSE_BYTES:
        raise _Unparsed
    try:  # no aliases: ``&a [*a, *a, ...]`` expands to gigabytes when compared
        return loads_yaml_strict(_text(data), max_depth=MAX_DEPTH, document="a reviewed file")
    except StrictYAMLError as exc:
        raise _Unparsed from exc


def _number_text(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


_TABLE_HEAD = re.compile(r"^\|\s*Task\s*\|.*\bMetric\s*\|\s*Value\s*\|", re.IGNORECASE)


def parse_scores(text: str) -> dict[str, str] | None:
    """A lighteval results table (``|Task|Version|Metric|Value|...``) as ``{"task|metric": "0.2500"}``; else None."""
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if _TABLE_HEAD.match(line.strip())]
    if not heads:
        return None
    at = heads[0]
    head = [c.strip().lower() for c in lines[at].strip().strip("|").split("|")]
    task_i, metric_i, value_i = head.index("task"), head.index("metric"), head.index("value")
    scores: dict[str, str] = {}
    task = ""
    for line in lines[at + 2 :]:
        if not line.strip().startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) <= max(task_i, metric_i, value_i):
            continue
        task = cells[task_i] or task
        if _number_text(cells[value_i]) is not None:
            scores[f"{task}|{cells[metric_i]}"] = cells[value_i]
    return scores or None


def _amber(text: str) -> dict[str, str] | None:
    """syrupy's ``.ambr``: ``# name: test`` blocks as ``{test: text}``; None when there are none."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("# name: "):
            current = blocks.setdefault(line[len("# name: ") :].strip(), [])
        elif current is not None and line != "# ---":
            current.append(line)
    return {name: "\n".join(body) for name, body in blocks.items()} or None


# -- comparing -----------------------------------------------------------------------------------------------------


def _structured(old: Any, new: Any, *, deltas: bool) -> Comparison:
    if _canonical(old) == _canonical(new):
        return Comparison(FORMAT if _ordered(old) == _ordered(new) else REORDERED)
    if _canonical(_normalised(old)) == _canonical(_normalised(new)):
        return Comparison(REORDERED)
    changes, extra = _limited(diff_values(old, new, deltas=deltas))
    return Comparison(VALUE, changes, omitted=extra)


def _lines(old_text: str, new_text: str) -> Comparison:
    old_lines = [line.rstrip() for line in old_text.splitlines()]
    new_lines = [line.rstrip() for line in new_text.splitlines()]
    while old_lines and not old_lines[-1]:
        old_lines.pop()
    while new_lines and not new_lines[-1]:
        new_lines.pop()
    if old_lines == new_lines:
        return Comparison(FORMAT)
    if sorted(old_lines) == sorted(new_lines):
        return Comparison(REORDERED)
    changes: list[Change] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            changes += [
                Change(f"line {j + 1}", shown(old_lines[i]), shown(new_lines[j]))
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            ]
            continue
        changes += [Change(f"line {i + 1}", shown(old_lines[i]), None) for i in range(i1, i2)]
        changes += [Change(f"line {j + 1}", None, shown(new_lines[j])) for j in range(j1, j2)]
    kept, extra = _limited(iter(changes))
    return Comparison(VALUE, kept, omitted=extra)


def _score_delta(old: str | None, new: str | None) -> str | None:
    a, b = _number_text(old), _number_text(new)
    return None if a is None or b is None else f"{b - a:+.4f}"


def _plain_text(old_text: str, new_text: str) -> Comparison:
    old_scores, new_scores = parse_scores(old_text), parse_scores(new_text)
    if old_scores is not None and new_scores is not None:
        compared = _lines(old_text, new_text)
        if compared.category != VALUE:
            return compared
        changes, extra = _limited(
            Change(
                key,
                old_scores.get(key),
                new_scores.get(key),
                _score_delta(old_scores.get(key), new_scores.get(key)),
            )
            for key in dict.fromkeys([*old_scores, *new_scores])
            if _number_text(old_scores.get(key)) != _number_text(new_scores.get(key))
        )
        if changes:
            return Comparison(VALUE, changes, omitted=extra, note="scores")
        return compared  # the table's other columns (stderr, versions) changed
    old_amber, new_amber = _amber(old_text), _amber(new_text)
    if old_amber is not None and new_amber is not None:
        compared = _lines(old_text, new_text)
        if compared.category != VALUE:
            return compared
        changes = []
        for name in dict.fromkeys([*old_amber, *new_amber]):
            before, after = old_amber.get(name), new_amber.get(name)
            if before == after:
                continue
            inner = _lines(before or "", after or "").changes if before and after else []
            if not inner:
                changes.append(Change(name, "…" if before else None, "…" if after else None))
            changes += [Change(f"{name} {c.path}", c.old, c.new) for c in inner]
        kept, extra = _limited(iter(changes))
        return Comparison(VALUE, kept, omitted=extra)
    return _lines(old_text, new_text)


#: Zip members compared (a dataset package holds a handful); more is compared as bytes.
MAX_ZIP_MEMBERS = 1000
_ZIP_TEXT = (".jsonl", ".json", ".yaml", ".yml", ".txt", ".py", ".md", ".csv")


def _members(data: bytes) -> dict[str, bytes]:
    """A zip's members by name (``_Unparsed`` for a file that is no zip, or too large to open here)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = [i for i in archive.infolist() if not i.is_dir()]
            if len(infos) > MAX_ZIP_MEMBERS or sum(i.file_size for i in infos) > MAX_PARSE_BYTES:
                raise _Unparsed
            return {i.filename: archive.read(i) for i in infos}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, RuntimeError, ValueError) as exc:
        raise _Unparsed from exc


def _zips(old: bytes, new: bytes) -> Comparison:
    """A zip (a dataset package) by member: which were added or removed, and the lines of changed text members."""
    before, after = _members(old), _members(new)
    if before == after:
        return Comparison(
            FORMAT if list(before) == list(after) else REORDERED, note="the same members, other zip bytes"
        )
    changes: list[Change] = []
    for name in dict.fromkeys([*before, *after]):
        was, now = before.get(name), after.get(name)
        if was == now:
            continue
        if was is None or now is None:
            changes.append(
                Change(name, None if was is None else f"{len(was)} bytes", None if now is None else f"{len(now)} bytes")
            )
            continue
        inner = None
        if name.lower().endswith(".jsonl"):
            with contextlib.suppress(_Unparsed, ValueError):
                rows = [[loads_strict(line) for line in _text(d).splitlines() if line.strip()] for d in (was, now)]
                inner = Comparison(VALUE, list(diff_values(rows[0], rows[1], name)))
                changes += inner.changes
                continue
        if name.lower().endswith(_ZIP_TEXT):
            with contextlib.suppress(_Unparsed):
                inner = _lines(_text(was), _text(now))
        if inner is not None and inner.changes:
            changes += [Change(f"{name} {c.path}", c.old, c.new) for c in inner.changes]
        else:
            old_sha, new_sha = hashlib.sha256(was).hexdigest()[:12], hashlib.sha256(now).hexdigest()[:12]
            changes.append(Change(name, f"sha256 {old_sha}…", f"sha256 {new_sha}…"))
    kept, extra = _limited(iter(changes))
    return Comparison(VALUE, kept, omitted=extra, note=f"{len(after)} members, {len(before)} in the base")


def compare(old: bytes | None, new: bytes | None, suffix: str, *, deltas: bool = False) -> Comparison:
    """The category of a change from ``old`` to ``new`` bytes (``None``: that side has no file)."""
    if old is None:
        return Comparison(NEW)
    if new is None:
        return Comparison(REMOVED)
    suffix = suffix.lower()
    try:
        if suffix in {".yaml", ".yml", ".json"}:
            return _structured(parse_structured(old, suffix), parse_structured(new, suffix), deltas=deltas)
        if max(len(old), len(new)) > MAX_PARSE_BYTES:
            raise _Unparsed
        if suffix == ".zip" or (old.startswith(b"PK\x03\x04") and new.startswith(b"PK\x03\x04")):
            return _zips(old, new)
        return _plain_text(_text(old), _text(new))
    except (_Unparsed, RecursionError):  # RecursionError: JSON nested deeper than the comparison can walk
        return Comparison(BYTES, note=f"not parsed as {suffix or 'text'}: {len(old)} → {len(new)} bytes")


def value_of(data: bytes, suffix: str) -> Any:
    """The parsed value (``None`` when it cannot be parsed)."""
    try:
        return parse_structured(data, suffix.lower())
    except _Unparsed:
        return None
