"""One fixture file: the envelope rules and the frozen ``CapabilityFixture`` they produce."""

from __future__ import annotations

import copy
import inspect
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from evaljig_corpus._conformance import CONFORMANCE_CHECKS
from evaljig_corpus.strict_json import JsonInputError, loads

FIXTURE_SCHEMA_VERSION = 1
#: Capabilities in corpus order; each is a folder of the corpus and has an ``assert_<capability>_conformance``.
CAPABILITIES = tuple(CONFORMANCE_CHECKS)
DATA_CLASSES = ("synthetic", "captured", "host-supplied")
EXPECTED = ("valid", "invalid")
BASELINE = "valid_baseline"
ENVELOPE_KEYS = (
    "schema_version",
    "id",
    "capability",
    "data_class",
    "expected",
    "expected_error_pattern",
    "description",
    "payload",
)
_INVALID_NAME = re.compile(r"invalid_[a-z0-9]+(?:_[a-z0-9]+)*")
_SENTENCE_BREAK = re.compile(r"[.!?]\s+[A-Z]")
#: Helper keyword arguments that tune the call rather than describe the request.
_NOT_PAYLOAD = frozenset({"target", "timeout"})


@dataclass(frozen=True, slots=True)
class CapabilityFixture:
    """A validated fixture, hashable so fixtures can be set members and cache keys.

    ``payload`` is a read-only view of the loader's own parse (its nested lists and dicts are
    not frozen, so never change them); it is compared but not hashed, since a mapping view has
    no hash. ``kwargs()`` gives a private deep copy to pass on.
    """

    id: str
    capability: str
    name: str
    data_class: str
    expected: str
    expected_error_pattern: str | None
    description: str
    payload: Mapping[str, Any] = field(hash=False)
    schema_version: int = FIXTURE_SCHEMA_VERSION
    error_regex: re.Pattern[str] | None = field(default=None, repr=False, compare=False)

    @property
    def is_valid(self) -> bool:
        return self.expected == "valid"

    def kwargs(self) -> dict[str, Any]:
        """A deep copy of the payload, safe to modify: ``assert_chat_conformance(url, **f.kwargs())``."""
        return copy.deepcopy(dict(self.payload))

    def matches(self, message: str) -> bool:
        """Whether an error message is the failure this invalid fixture names."""
        return self.error_regex is not None and self.error_regex.search(message) is not None


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a fixture name (a file stem in a capability folder), or None."""
    if not isinstance(name, str) or not name:
        return "fixture name must be a non-empty string"
    if "/" in name or "\\" in name or ".." in name:
        return f"fixture name {name!r} must not contain path separators or '..'"
    if name != BASELINE and not _INVALID_NAME.fullmatch(name):
        return f"fixture name {name!r} must be {BASELINE!r} or 'invalid_<reason>' (lower-case letters, digits, '_')"
    return None


def parse_fixture(capability: str, name: str, text: str) -> tuple[CapabilityFixture | None, list[str]]:
    """Check every envelope rule for ``<capability>/<name>.json``; the fixture only if there is no problem."""
    try:
        data = loads(text)
    except JsonInputError as exc:
        return None, [f"not valid JSON: {exc}"]
    if not isinstance(data, dict):
        return None, ["must be a JSON object (the fixture envelope)"]
    problems = _envelope_problems(data, capability, name)
    if problems:
        return None, problems
    pattern = data["expected_error_pattern"]
    fixture = CapabilityFixture(
        id=data["id"],
        capability=capability,
        name=name,
        data_class=data["data_class"],
        expected=data["expected"],
        expected_error_pattern=pattern,
        description=data["description"],
        payload=MappingProxyType(data["payload"]),
        schema_version=data["schema_version"],
        error_regex=re.compile(pattern) if pattern is not None else None,
    )
    return fixture, []


def _envelope_problems(data: dict[str, Any], capability: str, name: str) -> list[str]:
    problems = [f"unknown key {k!r}" for k in data if k not in ENVELOPE_KEYS]
    problems += [f"missing key {k!r}" for k in ENVELOPE_KEYS if k not in data]
    checks = (
        ("schema_version", _schema_version),
        ("id", lambda v: _id(v, capability, name)),
        ("capability", lambda v: _capability(v, capability)),
        ("data_class", lambda v: _one_of(v, DATA_CLASSES)),
        ("expected", lambda v: _expected(v, name)),
        ("expected_error_pattern", lambda v: _pattern(v, "valid" if name == BASELINE else "invalid")),
        ("description", _description),
        ("payload", lambda v: _payload(v, capability)),
    )
    for key, check in checks:
        if key in data:
            problems += [f"{key}: {p}" for p in check(data[key])]
    return problems


def _schema_version(value: Any) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, int):
        return [f"must be the integer {FIXTURE_SCHEMA_VERSION}, got {json.dumps(value)}"]
    if value != FIXTURE_SCHEMA_VERSION:
        return [f"unsupported version {value} (this loader reads {FIXTURE_SCHEMA_VERSION})"]
    return []


def _id(value: Any, capability: str, name: str) -> list[str]:
    wanted = f"{capability}.{name}"
    return [] if value == wanted else [f"must be {wanted!r} (<capability>.<file stem>), got {json.dumps(value)}"]


def _capability(value: Any, folder: str) -> list[str]:
    if value not in CAPABILITIES:
        return [f"must be one of {', '.join(CAPABILITIES)}, got {json.dumps(value)}"]
    return [] if value == folder else [f"{value!r} does not match its folder {folder!r}"]


def _one_of(value: Any, allowed: tuple[str, ...]) -> list[str]:
    return [] if value in allowed else [f"must be one of {', '.join(allowed)}, got {json.dumps(value)}"]


def _expected(value: Any, name: str) -> list[str]:
    if value not in EXPECTED:
        return _one_of(value, EXPECTED)
    implied = "valid" if name == BASELINE else "invalid"
    return [] if value == implied else [f"{value!r} contradicts the file name {name!r} (expected {implied!r})"]


def _pattern(value: Any, expected: Any) -> list[str]:
    if expected != "invalid":
        return [] if value is None else ["must be null for a valid fixture"]
    if not isinstance(value, str) or not value:
        return ["must be a non-empty regular expression for an invalid fixture"]
    try:
        re.compile(value)
    except (re.error, OverflowError, RecursionError) as exc:  # a{4294967296} overflows; deep nesting recurses
        return [f"does not compile: {exc}"]
    return []


def _description(value: Any) -> list[str]:
    if not isinstance(value, str) or not value.strip():
        return ["must be a non-empty string"]
    if "\n" in value or not value.endswith(".") or _SENTENCE_BREAK.search(value):
        return ["must be one sentence on one line, ending with '.'"]
    return []


def _payload(value: Any, capability: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"must be an object, got {json.dumps(value)}"]
    helper = CONFORMANCE_CHECKS.get(capability)
    if helper is None:
        return []  # the capability problem is reported on its own
    params = {n: p for n, p in inspect.signature(helper).parameters.items() if n not in _NOT_PAYLOAD}
    problems = [f"{k!r} is not an argument of {helper.__name__}()" for k in value if k not in params]
    required = [n for n, p in params.items() if p.default is inspect.Parameter.empty]
    problems += [f"missing required argument {n!r} of {helper.__name__}()" for n in required if n not in value]
    return problems
