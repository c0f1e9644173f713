"""The fixture builder stays small enough to hold in one's head: a few flat modules, one ``DatasetSource``.

Each module has one job and a docstring that says it; the dataset keyword list
``(rows, *, name, task, description, version, accuracy)`` lives in ``DatasetSource`` alone, and
the cassette module (which the LEV plugin's stale-recording check imports) loads vcrpy only when
a cassette is played.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import evaljig_fixtures

PACKAGE = Path(evaljig_fixtures.__file__).parent
REPO = Path(__file__).resolve().parents[3]
#: The modules of ``evaljig_fixtures`` (``__init__`` and ``__main__`` included); see the package README.
MAX_MODULES = 16
DATASET_FIELDS = {"rows", "name", "task", "description", "version", "accuracy"}


def test_the_package_is_a_few_flat_modules_each_with_a_docstring() -> None:
    modules = sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py"))
    assert len(modules) <= MAX_MODULES, modules
    assert [m for m in modules if "/" in m] == []  # no subpackage of re-exports to look through
    undocumented = [
        m for m in modules if ast.get_docstring(ast.parse((PACKAGE / m).read_text(encoding="utf-8"))) is None
    ]
    assert undocumented == []


def _python_files() -> list[Path]:
    roots = [*REPO.glob("packages/*/src"), REPO / "scripts", REPO / "testkit"]
    return sorted(p for root in roots if root.is_dir() for p in root.rglob("*.py"))


def test_no_function_repeats_the_dataset_keyword_list() -> None:
    """A function taking a dataset's fields one by one is a second ``DatasetSource``: pass the source."""
    repeated = []
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = node.args
                names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
                if len(names & DATASET_FIELDS) >= 4:
                    repeated.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name}")
    assert repeated == []


def test_the_cassette_module_loads_vcrpy_only_when_a_cassette_plays(tmp_path: Path) -> None:
    cassette = tmp_path / "empty.yaml"
    cassette.write_text("interactions: []\nversion: 1\n", encoding="utf-8")
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from evaljig_fixtures import _cassettes

        assert "vcr" not in sys.modules, "imported with the module"
        with _cassettes.replaying(Path({str(cassette)!r})):
            pass
        assert "vcr" in sys.modules
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
