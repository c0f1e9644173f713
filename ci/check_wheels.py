"""Check the built workspace wheels: package data inside, nothing from tests or the checkout.

Usage: ``python ci/check_wheels.py DIST_DIR`` (``nox -s package`` runs it after ``uv build``).
Every file under ``packages/<role>/src/<import>/`` (Python or data: corpus JSON, READMEs,
``py.typed``) must be in that package's wheel at the same path; no wheel may carry tests,
conftest files, bytecode, absolute or ``..`` paths, or text naming this checkout's path.
Exits 1 with one line per problem.
"""

from __future__ import annotations

import re
import sys
import tomllib
import zipfile
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
_FORBIDDEN_PARTS = {"tests", "test", "__pycache__"}
_FORBIDDEN_NAMES = {"conftest.py", "direct_url.json"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _expected_files(package: Path) -> dict[str, Path]:
    """Wheel path -> source file, for every shipped file under ``src/``."""
    src = package / "src"
    files = {}
    for path in sorted(src.rglob("*")):
        relative = path.relative_to(src)
        if path.is_file() and not _FORBIDDEN_PARTS & set(relative.parts) and path.suffix not in {".pyc", ".pyo"}:
            files[relative.as_posix()] = path
    return files


def _entry_problems(entry: str, packages: set[str], dist_info: str) -> list[str]:
    path = PurePosixPath(entry)
    if entry.startswith("/") or "\\" in entry or ".." in path.parts or re.match(r"^[A-Za-z]:", entry):
        return [f"{entry}: not a relative in-wheel path"]
    problems = []
    if _FORBIDDEN_PARTS & set(path.parts) or path.name in _FORBIDDEN_NAMES or path.suffix in {".pyc", ".pyo"}:
        problems.append(f"{entry}: tests, conftest, bytecode or install metadata must not ship")
    if path.parts[0] not in packages and path.parts[0] != dist_info:
        problems.append(f"{entry}: outside the package ({', '.join(sorted(packages))}) and {dist_info}")
    return problems


def check_wheel(wheel: Path, package: Path) -> list[str]:
    """Every problem of one wheel built from ``package``, each prefixed with the wheel's name."""
    expected = _expected_files(package)
    packages = {PurePosixPath(p).parts[0] for p in expected}
    checkout = str(ROOT).encode()
    with zipfile.ZipFile(wheel) as archive:
        entries = [i.filename for i in archive.infolist() if not i.is_dir()]
        dist_info = next((PurePosixPath(e).parts[0] for e in entries if ".dist-info/" in e), "?.dist-info")
        problems = [p for e in entries for p in _entry_problems(e, packages, dist_info)]
        problems += [f"{p}: in src/ but missing from the wheel" for p in expected if p not in entries]
        problems += [f"{e}: names the checkout path {ROOT}" for e in entries if checkout in archive.read(e)]
    return [f"{wheel.name}: {p}" for p in problems]


def main(dist: Path) -> int:
    members = sorted(p for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").is_file())
    wheels = sorted(dist.glob("*.whl"))
    problems: list[str] = []
    for package in members:
        name = _norm(tomllib.loads((package / "pyproject.toml").read_text())["project"]["name"])
        built = [w for w in wheels if _norm(w.name.split("-")[0]) == name]
        if len(built) != 1:
            problems.append(f"{package.name}: expected one wheel for {name} in {dist}, found {len(built)}")
            continue
        found = check_wheel(built[0], package)
        problems += found
        shipped = len(_expected_files(package))
        print(f"{built[0].name}: {'FAIL' if found else 'ok'} ({shipped} files from src/)")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
