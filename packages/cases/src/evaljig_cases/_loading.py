"""Load eval cases from one JSON/YAML file or a folder of them, failing loudly and precisely."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evaljig_cases._errors import CaseLoadError, DuplicateCaseError, describe_validation_error
from evaljig_cases._eval_case import EvalCase
from evaljig_common import StrictJSONError, StrictYAMLError, loads_strict, loads_yaml_strict

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


def _parse(file: Path, text: str) -> Any:
    if file.suffix.lower() == ".json":
        try:  # the shared strict reader: a repeated key is refused, nesting bounded like YAML's
            return loads_strict(text, max_depth=MAX_DEPTH)
        except StrictJSONError as exc:
            raise CaseLoadError(f"{file}: invalid JSON{exc.where}: {exc.reason}", path=file) from exc
    try:  # the shared strict reader too: anchors, aliases and merge keys allowed, within a budget
        return loads_yaml_strict(text, max_depth=MAX_DEPTH, max_alias_nodes=MAX_ALIAS_EXPANSION, document="a case file")
    except StrictYAMLError as exc:
        raise CaseLoadError(f"{file}: invalid YAML{exc.where}: {exc.reason}", path=file) from exc


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
