"""Readable golden snapshots, built on syrupy: YAML for data, plain text for strings.

Goldens live in one folder of the repository (``golden/`` beside pytest's rootdir by default,
ini option ``evaljig_golden_dir``), so that a reviewer reads a diff, not a serialisation format.
Where a test module's goldens go is the *layout* (ini option ``evaljig_golden_layout``):

``path`` (the default, for any repository)
    ``<golden>/<test module's path from the rootdir, without .py>/<test>.<ext>``:
    ``evals/tests/test_pipeline.py::test_config`` -> ``golden/evals/tests/test_pipeline/test_config.yaml``.
``packages`` (a monorepo of ``packages/<pkg>/tests/``, evaljig's own)
    ``<golden>/<pkg>/<test module>/<test>.<ext>``.

syrupy serialises an extension by its class path (xdist workers send their reports to the
controller that way), so the extensions are plain module-level classes and read the session's
settings from :data:`SETTINGS`, which the plugin sets in every process at configure time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation
from syrupy.types import PropertyFilter, PropertyMatcher, SerializableData, SerializedData

from evaljig_common import EvaljigError

GOLDEN_DIRNAME = "golden"
PACKAGES_DIRNAME = "packages"
LAYOUTS = ("path", "packages")
#: The folder syrupy is told about for a test file the layout cannot place; never created.
_NOWHERE = "__no_goldens_here__"


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


class GoldenPlacementError(EvaljigError, ValueError):
    """A test module the layout cannot give a golden folder (outside the rootdir, or outside ``packages/``)."""


@dataclass(frozen=True)
class GoldenSettings:
    """Where goldens live for this session: ``root`` (pytest's rootdir), the golden folder and the layout."""

    root: Path
    golden: Path
    layout: str = "path"
    update_command: str = "pytest --snapshot-update"

    def module_dir(self, test_file: Path) -> Path:
        """The golden folder of one test module (``GoldenPlacementError`` when the layout has none for it)."""
        resolved = test_file.resolve()
        if self.layout == "packages":
            parts = resolved.parts
            try:
                at = len(parts) - 1 - parts[::-1].index(PACKAGES_DIRNAME)
            except ValueError as exc:
                raise GoldenPlacementError(
                    f"{test_file}: golden tests must live under {PACKAGES_DIRNAME}/<pkg>/tests/"
                    " (evaljig_golden_layout = packages)"
                ) from exc
            return self.golden / parts[at + 1] / resolved.stem
        try:
            relative = resolved.relative_to(self.root.resolve())
        except ValueError as exc:
            raise GoldenPlacementError(f"{test_file}: golden tests must live under the rootdir {self.root}") from exc
        return self.golden.joinpath(*relative.parent.parts, resolved.stem)


#: This process's settings (the plugin sets them in ``pytest_configure``); the default serves a bare import.
SETTINGS = GoldenSettings(root=Path.cwd(), golden=Path.cwd() / GOLDEN_DIRNAME)


def configure(settings: GoldenSettings) -> GoldenSettings:
    """Make ``settings`` this process's; returns the previous ones (restored at unconfigure)."""
    global SETTINGS
    previous, SETTINGS = SETTINGS, settings
    return previous


class _GoldenExtension(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        """The test module's golden folder; a folder that never exists for a module the layout cannot place.

        syrupy asks this for every collected test file, golden user or not; raising here would end
        its report (silently, in an xdist worker). The ``golden`` fixture refuses such a file itself.
        """
        try:
            return str(SETTINGS.module_dir(Path(test_location.filepath)))
        except GoldenPlacementError:
            return str(Path(test_location.filepath).parent / _NOWHERE)

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
    ) -> SerializedData:
        """syrupy's hook; the golden's file text is :meth:`render`'s (filters and matchers do not apply)."""
        return self.render(data)

    def render(self, data: SerializableData) -> str:
        raise NotImplementedError


class YamlGolden(_GoldenExtension):
    """Structured values as readable YAML."""

    file_extension = "yaml"

    def render(self, data: SerializableData) -> str:
        return dump_yaml(data)


class TextGolden(_GoldenExtension):
    """Strings exactly as they are, with a trailing newline guaranteed."""

    file_extension = "txt"

    def render(self, data: SerializableData) -> str:
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
