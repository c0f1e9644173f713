"""A package ``__init__`` whose public names are imported on first use (PEP 562).

Four evaljig packages register pytest plugins (``pytest11``), so pytest imports them into every
session of every repository they are installed in, before a single test runs; a plugin module
imports its package's ``__init__`` first. An ``__init__`` importing all of its modules cost
each pytest process (each xdist worker too) about a third of a second of CPU for things most
sessions never use (uvicorn, httpx, pydantic models, report writers).

So such an ``__init__`` writes each public name twice: in ``__all__``, and in an
``if TYPE_CHECKING:`` block of ``from module import name`` lines, which type checkers and
readers follow and which also say where :func:`lazy_exports` finds each name at run time.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path


def lazy_exports(package: str, init_file: str, public: Sequence[str]) -> Callable[[str], object]:
    """The ``__getattr__`` of ``package``: each name of ``public``, imported from its module on first use.

    Use it as ``__getattr__ = lazy_exports(__name__, __file__, __all__)`` below the
    ``TYPE_CHECKING`` imports. A name of ``public`` that the block does not import is an
    ``AttributeError`` naming the package, as is any name not in ``public``. It also gives the
    package a ``__dir__`` that lists ``public`` before first use, so ``dir()``, a REPL's and an
    editor's completion see every public name.
    """
    names = frozenset(public)
    module = sys.modules[package]

    def __dir__() -> list[str]:  # noqa: N807 (PEP 562's name)
        return sorted(names | set(vars(module)))

    module.__dir__ = __dir__  # type: ignore[method-assign]

    @functools.cache
    def defining_modules() -> dict[str, tuple[str, str]]:
        """Public name -> its module and its name there, read once from the ``TYPE_CHECKING`` block."""
        import ast  # on first use only: evaljig_common is imported at every evaljig start

        tree = ast.parse(Path(init_file).read_text(encoding="utf-8"))
        blocks = [node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"]
        return {
            alias.asname or alias.name: (node.module, alias.name)
            for block in blocks
            for node in block.body
            if isinstance(node, ast.ImportFrom) and node.module is not None
            for alias in node.names
        }

    def __getattr__(name: str) -> object:  # noqa: N807 (PEP 562's name)
        where = defining_modules().get(name) if name in names else None
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value: object = getattr(importlib.import_module(where[0]), where[1])
        setattr(module, name, value)  # later lookups find it in the module: no second import
        return value

    return __getattr__
