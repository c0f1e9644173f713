"""lazy_exports: a package's public names imported on first use, from the modules its TYPE_CHECKING block names."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

INIT = """\
from __future__ import annotations

from typing import TYPE_CHECKING

from evaljig_common import lazy_exports

if TYPE_CHECKING:
    from lazypkg._heavy import HEAVY_VALUE, heavy
    from lazypkg._light import light as renamed

__all__ = ["HEAVY_VALUE", "heavy", "renamed", "forgotten"]

__getattr__ = lazy_exports(__name__, __file__, __all__)
"""


@pytest.fixture
def lazypkg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    package = tmp_path / "lazypkg"
    package.mkdir()
    (package / "__init__.py").write_text(INIT, encoding="utf-8")
    (package / "_heavy.py").write_text("HEAVY_VALUE = 42\n\ndef heavy():\n    return 'heavy'\n", encoding="utf-8")
    (package / "_light.py").write_text("def light():\n    return 'light'\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield package
    for name in [m for m in sys.modules if m == "lazypkg" or m.startswith("lazypkg.")]:
        del sys.modules[name]


def test_a_name_is_imported_from_its_module_on_first_use_and_kept(lazypkg: Path) -> None:
    package = importlib.import_module("lazypkg")
    assert "lazypkg._heavy" not in sys.modules
    assert package.HEAVY_VALUE == 42
    assert "lazypkg._heavy" in sys.modules
    assert "HEAVY_VALUE" in vars(package)  # kept: the next lookup does not go through __getattr__
    assert "lazypkg._light" not in sys.modules


def test_from_imports_and_an_alias_work(lazypkg: Path) -> None:
    from lazypkg import HEAVY_VALUE, heavy, renamed  # type: ignore[import-not-found]

    assert (HEAVY_VALUE, heavy(), renamed()) == (42, "heavy", "light")


def test_unknown_names_and_public_names_the_block_forgot_are_attribute_errors_naming_the_package(
    lazypkg: Path,
) -> None:
    package = importlib.import_module("lazypkg")
    with pytest.raises(AttributeError, match="module 'lazypkg' has no attribute 'nowhere'"):
        _ = package.nowhere
    with pytest.raises(AttributeError, match="module 'lazypkg' has no attribute 'forgotten'"):
        _ = package.forgotten


def test_dir_lists_the_public_names_before_first_use(lazypkg: Path) -> None:
    package = importlib.import_module("lazypkg")
    assert {"HEAVY_VALUE", "heavy", "renamed", "lazy_exports"} <= set(dir(package))
    assert "lazypkg._heavy" not in sys.modules  # listing them imports nothing


def test_evaljig_common_lists_its_lazy_names_with_the_others() -> None:
    import evaljig_common

    assert {"loads_yaml_strict", "StrictYAMLError", "write_text_atomic"} <= set(dir(evaljig_common))
