"""Readable golden snapshots for every package, built on syrupy.

Goldens live in ``golden/<package>/<test_module>/<test_name>.<ext>``: structured data is
stored as YAML (``.yaml``) and strings as plain text (``.txt``) so that a reviewer reads a
diff, not a serialisation format. One fixture, ``golden``, picks the format from the value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation
from syrupy.types import PropertyFilter, PropertyMatcher, SerializableData, SerializedData

GOLDEN_DIRNAME = "golden"


class _ReadableDumper(yaml.SafeDumper):
    """Safe YAML with block scalars for multi-line strings and no aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_ReadableDumper.add_representer(str, _represent_str)


def to_plain(data: Any) -> Any:
    """Turn pydantic models, dataclasses, tuples and sets into plain YAML-able values."""
    if hasattr(data, "model_dump"):
        return to_plain(data.model_dump(mode="json"))
    if isinstance(data, dict):
        return {str(k): to_plain(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [to_plain(v) for v in data]
    if isinstance(data, (set, frozenset)):
        return sorted(to_plain(v) for v in data)
    if isinstance(data, bytes):
        return data.decode("utf-8", errors="backslashreplace")
    if isinstance(data, Path):
        return data.as_posix()
    return data


def dump_yaml(data: Any) -> str:
    """The canonical golden YAML text for ``data`` (stable, UTF-8, trailing newline)."""
    return yaml.dump(
        to_plain(data),
        Dumper=_ReadableDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )


def golden_dir_for(test_file: Path) -> Path:
    """``packages/<pkg>/tests/.../test_x.py`` -> ``golden/<pkg>/test_x``."""
    parts = test_file.resolve().parts
    try:
        at = len(parts) - 1 - parts[::-1].index("packages")
    except ValueError as exc:
        raise ValueError(f"{test_file}: golden tests must live under packages/<pkg>/tests/") from exc
    root = Path(*parts[:at])
    return root / GOLDEN_DIRNAME / parts[at + 1] / test_file.stem


class _GoldenExtension(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        """The test module's golden folder; a folder that never exists for a test file outside packages/.

        syrupy asks this for every collected test file, golden user or not; raising here would end
        its report (silently, in an xdist worker). The ``golden`` fixture refuses such a file itself.
        """
        try:
            return str(golden_dir_for(Path(test_location.filepath)))
        except ValueError:
            return str(Path(test_location.filepath).parent / "__no_goldens_outside_packages__")


class YamlGolden(_GoldenExtension):
    """Structured values as readable YAML."""

    file_extension = "yaml"

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
    ) -> SerializedData:
        return dump_yaml(data)


class TextGolden(_GoldenExtension):
    """Strings exactly as they are, with a trailing newline guaranteed."""

    file_extension = "txt"

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
    ) -> SerializedData:
        text = str(data)
        return text if text.endswith("\n") else text + "\n"


class Golden:
    """``assert golden == value``: YAML for data, text for ``str``; ``golden(name=...)`` names it."""

    def __init__(self, snapshot: SnapshotAssertion) -> None:
        self._yaml = snapshot.use_extension(YamlGolden)
        self._text = snapshot.use_extension(TextGolden)
        self.last: SnapshotAssertion | None = None

    def __call__(self, *, name: str) -> Golden:
        named = Golden.__new__(Golden)
        named._yaml = self._yaml(name=name)
        named._text = self._text(name=name)
        named.last = None
        return named

    def __eq__(self, other: object) -> bool:
        self.last = self._text if isinstance(other, str) else self._yaml
        return self.last == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.last) if self.last is not None else "Golden()"
