"""Read a provider spec file into a mapping, refusing what JSON and YAML parsers silently accept.

Both parsers keep the last of two duplicate keys (a typo then wins quietly), recurse until
``RecursionError`` on deep nesting, and raise bare ``ValueError`` on integers over 4,300
digits. Specs are read by evaljig-common's strict readers (``loads_strict``, ``loads_yaml_strict``:
the verdicts every evaljig package gives), and each refusal becomes a one-line :class:`ConfigError`
naming the file, the field or place, and the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaljig_common import StrictJSONError, StrictYAMLError, loads_strict, loads_yaml_strict
from evaljig_config._errors import ConfigError

#: A provider spec is a few hundred bytes; anything this big is not one.
MAX_SPEC_BYTES = 1024 * 1024
SUFFIXES = (".json", ".yaml", ".yml")


class _DuplicateKeyError(Exception):
    def __init__(self, key: object, line: int | None) -> None:
        super().__init__(key)
        self.key = key
        self.line = line


def _parse(path: Path, text: str) -> Any:
    """JSON and YAML by evaljig-common's strict readers: the verdicts every evaljig package gives.

    A YAML alias is refused where it appears: a shared node is cheap to load, but whatever reads the
    spec next (validation, the rendered ``config.yaml``) pays for every copy, and 800 KB of aliases
    to one long stop token made ``evaljig-config render`` run for minutes."""
    if path.suffix == ".json":
        try:
            return loads_strict(text)
        except StrictJSONError as exc:
            if exc.key is not None:
                raise _DuplicateKeyError(exc.key, None) from None
            raise ValueError(f"{exc.reason}{exc.where}") from None
    try:
        return loads_yaml_strict(text, document="a provider spec")
    except StrictYAMLError as exc:
        if exc.kind == "duplicate":
            raise _DuplicateKeyError(exc.key, exc.line) from None
        fix = "; write the value out where it is used" if exc.kind == "alias" else ""
        raise ValueError(f"{exc.reason}{exc.where}{fix}") from None


def read_mapping(path: Path) -> dict[str, Any]:
    """The top-level mapping of a ``.json``/``.yaml``/``.yml`` spec file; raises ``ConfigError``."""
    if path.suffix not in SUFFIXES:
        raise ConfigError(f"{path}: provider specs must be .json, .yaml or .yml")
    kind = "JSON" if path.suffix == ".json" else "YAML"
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read provider spec: {exc.strerror or exc}") from None
    if len(raw) > MAX_SPEC_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_SPEC_BYTES} bytes; not a provider spec")
    try:
        data = _parse(path, raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except _DuplicateKeyError as exc:
        where = f" (line {exc.line})" if exc.line else ""
        raise ConfigError(f"{path}: field '{exc.key}': duplicate key{where}; give each key once") from None
    except ValueError as exc:
        raise ConfigError(f"{path}: not valid {kind}: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of provider fields, got {type(data).__name__}")
    return data
