"""What the review looks at in a repository: golden folders, fixture folders, build scripts.

Nothing about evaljig's own tree is assumed. In order, each list comes from the command line
(``--golden DIR``, ``--fixtures DIR``), else ``[tool.evaljig.review]`` in the repository's
``pyproject.toml``::

    [tool.evaljig.review]
    golden = ["golden"]                       # golden folders (default: the pytest ini option
                                              # evaljig_golden_dir, else golden/, and any folder
                                              # named golden, wherever pytest's rootdir was)
    fixtures = ["tests/lighteval/fixtures"]   # fixture folders (default: [tool.evaljig] fixtures,
                                              # plus those the build scripts declare)
    build-scripts = ["scripts/build.py"]      # default: every script calling regen_main; [] for none

syrupy's own ``__snapshots__`` folders are goldens wherever they are.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaljig_review._errors import ReviewError

PYPROJECT = "pyproject.toml"


@dataclass(frozen=True)
class ReviewConfig:
    golden: tuple[str, ...]
    fixtures: tuple[str, ...]
    build_scripts: tuple[str, ...] | None
    """``None``: discover them."""
    golden_names: tuple[str, ...] = ()
    """Without a configured golden folder: folder names that hold goldens wherever they are (``golden``: a
    team whose pytest runs from ``backend/`` has ``backend/golden/``)."""


def _table(root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the whole pyproject, its ``[tool.evaljig.review]``); both empty without a pyproject."""
    path = root / PYPROJECT
    if not path.is_file():
        return {}, {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ReviewError(f"{path}: cannot read: {exc}") from exc
    evaljig = data.get("tool", {}).get("evaljig", {})
    review = evaljig.get("review", {}) if isinstance(evaljig, dict) else {}
    if not isinstance(review, dict):
        raise ReviewError(f"{path}: [tool.evaljig.review] must be a table")
    return data, review


def _paths(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ReviewError(f"{where}: must be a list of folder paths (strings), relative to the repository")
    return tuple(v.strip().rstrip("/") for v in value)


def load_config(root: Path, golden: list[str], fixtures: list[str]) -> ReviewConfig:
    """The review's lists for the repository at ``root``, command-line values first."""
    data, review = _table(root)
    where = f"{root / PYPROJECT}: [tool.evaljig.review]"
    names: tuple[str, ...] = ()
    if golden:
        golden_dirs = tuple(golden)
    elif "golden" in review:
        golden_dirs = _paths(review["golden"], f"{where} golden")
    else:
        ini = data.get("tool", {}).get("pytest", {}).get("ini_options", {})
        golden_dirs = (str(ini.get("evaljig_golden_dir", "golden")),)
        names = ("golden",)
    if fixtures:
        fixture_dirs = tuple(fixtures)
    elif "fixtures" in review:
        fixture_dirs = _paths(review["fixtures"], f"{where} fixtures")
    else:
        regen = data.get("tool", {}).get("evaljig", {}).get("fixtures")
        fixture_dirs = (regen,) if isinstance(regen, str) else ()
    scripts = _paths(review["build-scripts"], f"{where} build-scripts") if "build-scripts" in review else None
    unknown = sorted(set(review) - {"golden", "fixtures", "build-scripts"})
    if unknown:
        raise ReviewError(f"{where}: unknown key(s) {', '.join(unknown)} (known: golden, fixtures, build-scripts)")
    return ReviewConfig(golden_dirs, fixture_dirs, scripts, names)
