"""Load eval cases from one JSON/YAML file or a folder of them, failing loudly and precisely."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from evaljig_cases._errors import CaseLoadError, DuplicateCaseError, describe_validation_error
from evaljig_cases._eval_case import EvalCase
from evaljig_common import StrictJSONError, loads_strict

CASE_SUFFIXES = (".json", ".yaml", ".yml")
MAX_DEPTH = 100
"""Case files nest a few levels; deeper is a mistake or an attack (parsers recurse, report JSON stops at 255)."""
MAX_ALIAS_EXPANSION = 100_000
"""Nodes that YAML aliases and merge keys may add once expanded: a 650-byte alias bomb adds hundreds of millions."""


def load_cases(path: str | Path) -> list[EvalCase]:
    """Cases from a file, or from every case file under a folder (recursively, sorted by relative path).

    Hidden files and everything under hidden folders (``.git``, ``.venv``, editor backups) are skipped.
    """
    root = Path(path)
    if root.is_dir():
        files = sorted(
            (p for p in root.rglob("*") if p.is_file() and _is_case_file(p.relative_to(root))),
            key=lambda p: p.relative_to(root).as_posix(),
        )
        if not files:
            raise CaseLoadError(f"{root}: no case files ({', '.join(CASE_SUFFIXES)}) found", path=root)
        cases = [case for f in files for case in load_case_file(f)]
    else:
        cases = load_case_file(root)
    ensure_unique_ids(cases)
    return cases


def load_case_file(path: str | Path) -> list[EvalCase]:
    """The cases of one file: a single case, a list of cases, or ``{"cases": [...]}``.

    Cases may use evaljig's field names or the tool-eval proposal's (``case_id``, ``artifact_mock``).
    """
    file = Path(path)
    if file.suffix.lower() not in CASE_SUFFIXES:
        raise CaseLoadError(f"{file}: not a case file (expected {', '.join(CASE_SUFFIXES)})", path=file)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise CaseLoadError(f"{file}: cannot read: {exc.strerror or exc}", path=file) from exc
    except UnicodeDecodeError as exc:
        raise CaseLoadError(f"{file}: not valid UTF-8 (byte {exc.start}: {exc.reason})", path=file) from exc
    raw = _parse(file, text)
    cases = [_validate(file, index, item) for index, item in enumerate(_case_list(file, raw))]
    ensure_unique_ids(cases)
    return cases


def ensure_unique_ids(cases: Iterable[EvalCase]) -> None:
    """Reject two cases with the same id, naming where each was defined."""
    seen: dict[str, EvalCase] = {}
    for case in cases:
        first = seen.setdefault(case.id, case)
        if first is not case:
            raise DuplicateCaseError(
                f"duplicate case id {case.id!r}: defined in {first.source or '?'} and again in {case.source or '?'}",
                path=Path(case.source) if case.source else None,
                case=case.id,
            )


def _is_case_file(relative: Path) -> bool:
    """A case file suffix in any case (``.JSON`` too), and no hidden part in its path below the root."""
    return relative.suffix.lower() in CASE_SUFFIXES and not any(part.startswith(".") for part in relative.parts)


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that rejects a key given twice in one mapping (PyYAML keeps the last one silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        first_lines: dict[Hashable, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *base` keys may be overridden: that is what merge keys are for
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):
                continue  # the base class reports unhashable keys
            if key in first_lines:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {first_lines[key]})", key_node.start_mark
                )
            first_lines[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep)


class CaseFileLoader(UniqueKeyLoader):
    """``UniqueKeyLoader`` that bounds what a small file can make: nesting depth and alias expansion.

    Both are checked on the node graph, before any Python object is built: the depth while
    composing (PyYAML composes recursively, so 1,000 levels would be a raw ``RecursionError``),
    the expansion once the document is composed (aliases are shared nodes, cheap to load, but
    every consumer that walks or serialises the case pays for each copy). Merge keys still work.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        nests = int(self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent))
        if nests and self._depth >= MAX_DEPTH:
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels", mark)
        self._depth += nests
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= nests

    def get_single_node(self) -> yaml.Node | None:
        node = super().get_single_node()
        if node is not None:
            check_alias_expansion(node)
        return node


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def check_alias_expansion(root: yaml.Node, limit: int = MAX_ALIAS_EXPANSION) -> None:
    """Raise ``ComposerError`` (with the line) on a node that contains itself or that, with its aliases
    expanded, holds ``limit`` nodes more than the document has or nests deeper than ``MAX_DEPTH``.

    Iterative and memoised per node, so checking costs one visit per distinct node however far
    the aliases would expand; the first node found over a limit is the innermost one.
    """
    sizes: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes, nesting depth) once expanded
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_nodes.discard(key)
            below = [sizes[id(child)] for child in _children(node)]
            nodes = 1 + sum(n for n, _ in below)
            depth = int(isinstance(node, yaml.CollectionNode)) + max((d for _, d in below), default=0)
            sizes[key] = nodes, depth
            if nodes - len(sizes) > limit:
                problem = f"aliases expand to more than {limit} extra nodes (refused: an alias bomb?)"
                raise yaml.composer.ComposerError(None, None, problem, node.start_mark)
            if depth > MAX_DEPTH:
                problem = f"nested deeper than {MAX_DEPTH} levels once aliases are expanded"
                raise yaml.composer.ComposerError(None, None, problem, node.start_mark)
        elif key in open_nodes:
            raise yaml.composer.ComposerError(None, None, "recursive alias: a node contains itself", node.start_mark)
        elif key not in sizes:
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node))


def _parse(file: Path, text: str) -> Any:
    if file.suffix.lower() == ".json":
        try:  # the shared strict reader: a repeated key is refused, nesting bounded like YAML's
            return loads_strict(text, max_depth=MAX_DEPTH)
        except StrictJSONError as exc:
            raise CaseLoadError(f"{file}: invalid JSON{exc.where}: {exc.reason}", path=file) from exc
    try:
        return yaml.load(text, Loader=CaseFileLoader)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}" if where is not None else ""
        problem = getattr(exc, "problem", None) or exc
        raise CaseLoadError(f"{file}: invalid YAML{at}: {problem}", path=file) from exc


def _case_list(file: Path, raw: Any) -> Sequence[Any]:
    if isinstance(raw, dict) and set(raw) == {"cases"}:
        raw = raw["cases"]
    elif isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise CaseLoadError(f"{file}: expected a case, a list of cases or {{cases: [...]}}, found no cases", path=file)
    return raw


def _validate(file: Path, index: int, item: Any) -> EvalCase:
    case_id = (item.get("id") or item.get("case_id")) if isinstance(item, dict) else None
    label = f"case {case_id!r} (#{index})" if isinstance(case_id, str) else f"case #{index}"
    if not isinstance(item, dict):
        raise CaseLoadError(f"{file}: {label}: expected a mapping, got {type(item).__name__}", path=file)
    try:
        case = EvalCase.model_validate(item)
    except ValidationError as exc:
        raise CaseLoadError(
            f"{file}: {label}: {describe_validation_error(exc)}",
            path=file,
            case=case_id if isinstance(case_id, str) else None,
        ) from exc
    return case.with_source(str(file))
