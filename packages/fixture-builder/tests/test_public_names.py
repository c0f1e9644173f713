"""``evaljig_fixtures`` writes each public name in ``__all__`` and in its ``TYPE_CHECKING`` imports, nowhere else."""

from __future__ import annotations

import ast
from pathlib import Path

import evaljig_fixtures


def test_all_is_the_type_checking_imports_and_each_resolves() -> None:
    tree = ast.parse(Path(evaljig_fixtures.__file__).read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    imported = [a.name for n in block.body if isinstance(n, ast.ImportFrom) for a in n.names]
    assert sorted(imported) == sorted(evaljig_fixtures.__all__)
    assert len(set(evaljig_fixtures.__all__)) == len(evaljig_fixtures.__all__)
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in imported]
    assert len(strings) == len(imported)  # once in __all__, no third list
    for name in evaljig_fixtures.__all__:
        assert getattr(evaljig_fixtures, name) is not None
