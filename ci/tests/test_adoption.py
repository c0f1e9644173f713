"""``nox -s adoption`` installs as a team does: pip and uv, from dist/, with no constraints file.

The session itself runs in ``make ci`` (the real installs, the real lighteval); here the pieces
that decide what a team's install looks like: no constraints anywhere, the uv project's
project-relative find-links, the lock's portability check, and pip's sources handed to uv.
"""

from __future__ import annotations

import ast
import inspect
import tomllib
from pathlib import Path

from ci import adoption

ROOT = Path(__file__).resolve().parents[2]


def test_the_adoption_session_installs_with_pip_and_uv_and_no_constraints_file() -> None:
    # read, not imported: importing the noxfile registers its sessions with nox a second time
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    [function] = [
        node for node in ast.parse(noxfile).body if isinstance(node, ast.FunctionDef) and node.name == "adoption"
    ]
    session_source = ast.get_source_segment(noxfile, function) or ""
    adopt_source = inspect.getsource(adoption.adopt)
    for source in (session_source, adopt_source):
        assert "CONSTRAINTS" not in source
        assert "constraints" not in source.lower().replace("no constraints", "")
        assert '"-c"' not in source
    assert '("pip", "uv")' in session_source
    calls = [node for node in ast.walk(ast.parse(adopt_source)) if isinstance(node, ast.Constant)]
    assert "evaljig[lighteval]" in adoption.REQUIREMENTS
    assert any(c.value == "add" for c in calls)
    assert any(c.value == "install" for c in calls)


def test_the_team_pyproject_names_the_wheels_by_a_relative_path(tmp_path: Path) -> None:
    project = tomllib.loads(adoption.uv_project_toml("team-evals", "3.11"))
    assert project["tool"]["uv"]["find-links"] == ["wheels"]
    assert project["project"]["requires-python"] == ">=3.11"


def test_the_team_pyproject_compiles_bytecode_as_the_docs_say() -> None:
    """uv compiles nothing at install: with PYTHONDONTWRITEBYTECODE every lighteval start would recompile torch."""
    project = tomllib.loads(adoption.uv_project_toml("team-evals", "3.11"))
    assert project["tool"]["uv"]["compile-bytecode"] is True
    assert "compile-bytecode = true" in (ROOT / "docs" / "project.md").read_text(encoding="utf-8")


def test_a_lock_naming_a_path_of_this_machine_is_not_portable(tmp_path: Path) -> None:
    repo = tmp_path / "team"
    portable = 'source = { registry = "wheels" }\nsource = { registry = "/opt/wheels" }\n'
    assert adoption.lock_problems(portable, [repo, ROOT]) == []
    leaky = f'[[package]]\nname = "evaljig"\nsource = {{ registry = "{ROOT}/dist" }}\n'
    assert adoption.lock_problems(leaky, [repo, ROOT]) == [f'uv.lock:3: source = {{ registry = "{ROOT}/dist" }}']


def test_pips_sources_become_uvs_own_variables() -> None:
    settings = {
        "index-url": ["https://mirror.example/simple"],
        "extra-index-url": ["file:///opt/pypi/simple", "https://download.pytorch.org/whl/cpu"],
        "find-links": ["/opt/wheels"],
    }
    assert adoption.uv_source_env(settings) == {
        "UV_INDEX_STRATEGY": "unsafe-best-match",
        "UV_DEFAULT_INDEX": "https://mirror.example/simple",
        "UV_INDEX": "file:///opt/pypi/simple https://download.pytorch.org/whl/cpu",
        "UV_FIND_LINKS": "/opt/wheels",
    }
    assert adoption.uv_source_env({}) == {"UV_INDEX_STRATEGY": "unsafe-best-match"}


def test_resolved_versions_are_read_from_a_freeze() -> None:
    freeze = (
        "litellm==1.108.14\nOpenAI==3.57.0\ntorch==2.13.0+cpu\nsix==1.17.0\nhuggingface_hub==1.33.0\n-e file:///x\n"
    )
    assert adoption.resolved_versions(freeze) == {
        "huggingface-hub": "1.33.0",
        "litellm": "1.108.14",
        "openai": "3.57.0",
        "torch": "2.13.0+cpu",
    }
