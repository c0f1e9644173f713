"""Read a provider spec file into a mapping, refusing what JSON and YAML parsers silently accept.

Both parsers keep the last of two duplicate keys (a typo then wins quietly), recurse until
``RecursionError`` on deep nesting, and raise bare ``ValueError`` on integers over 4,300
digits; each becomes a one-line :class:`ConfigError` naming the file, the field and the reason.
JSON is read by evaljig-common's ``loads_strict`` (the verdicts every evaljig package gives).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from evaljig_common import StrictJSONError, loads_strict
from evaljig_config._errors import ConfigError

#: A provider spec is a few hundred bytes; anything this big is not one.
MAX_SPEC_BYTES = 1024 * 1024
SUFFIXES = (".json", ".yaml", ".yml")


class _DuplicateKeyError(Exception):
    def __init__(self, key: object, line: int | None) -> None:
        super().__init__(key)
        self.key = key
        self.line = line


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping, and aliases.

    An alias is a shared node: cheap to load, but whatever reads the spec next (validation, the
    rendered ``config.yaml``) pays for every copy. 800 KB of aliases to one long stop token made
    ``evaljig-config render`` run for minutes; a provider spec has no use for them, so ``*name``
    is refused where it appears (as cassettes refuse them)."""

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(
                None, None, "an alias (*name) in a provider spec: write the value out where it is used", mark
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        self.flatten_mapping(node)
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:  # unhashable: SafeLoader reports it below
                break
            if duplicate:
                raise _DuplicateKeyError(key, key_node.start_mark.line + 1)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _parse(path: Path, text: str) -> Any:
    if path.suffix == ".json":
        try:
            return loads_strict(text)  # evaljig-common's one strict reader
        except StrictJSONError as exc:
            if exc.key is not None:
                raise _DuplicateKeyError(exc.key, None) from None
            raise ValueError(f"{exc.reason}{exc.where}") from None
    return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass


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
    except RecursionError:
        raise ConfigError(f"{path}: not valid {kind}: nested too deeply") from None
    except (ValueError, yaml.YAMLError) as exc:  # json.JSONDecodeError and huge integers are ValueErrors
        raise ConfigError(f"{path}: not valid {kind}: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of provider fields, got {type(data).__name__}")
    return data
