"""Check the built wheels (and sdists): package data inside, nothing from tests or the checkout, full metadata.

Usage: ``python ci/check_wheels.py [--sdist] DIST_DIR`` (``nox -s package`` runs it after
``uv build``, ``nox -s dist`` with ``--sdist``). Every file under ``packages/<dir>/src/<import>/``
(Python or data: corpus JSON, READMEs, ``py.typed``) must be in that package's wheel at the
same path; no wheel may carry tests, conftest files, bytecode, absolute or ``..`` paths, or text
naming this checkout's path. Every wheel's METADATA and every sdist's PKG-INFO must carry the
one version (the VERSION file), the license and its file, the Python classifiers of the root
pyproject, ``Framework :: Pytest`` when the package has a pytest plugin, and the project URLs;
the meta-package ``evaljig`` must pin every other package to that version. With ``--sdist``
every package also needs an sdist with its PKG-INFO, pyproject.toml, README.md and LICENSE.
Exits 1 with one line per problem.
"""

from __future__ import annotations

import email.parser
import re
import sys
import tarfile
import tomllib
import zipfile
from email.message import Message
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
_FORBIDDEN_PARTS = {"tests", "test", "__pycache__"}
_FORBIDDEN_NAMES = {"conftest.py", "direct_url.json"}
VERSION = (ROOT / "VERSION").read_text(encoding="utf-8").strip()
LICENSE_EXPRESSION = "Apache-2.0"
LICENSE_FILE = "LICENSE"
PYTHON_CLASSIFIERS = tuple(
    c for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["classifiers"] if "Python ::" in c
)
PROJECT_URLS = ("Homepage", "Documentation", "Source", "Issues")
URL_PREFIX = "https://github.com/evaljig/evaljig"
META = "evaljig"
SDIST_FILES = ("PKG-INFO", "pyproject.toml", "README.md", LICENSE_FILE)


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


#: a Markdown link to a relative path (``](../../docs/x.md)``): it resolves on GitHub, not on PyPI
_RELATIVE_LINK = re.compile(r"\]\((?![a-zA-Z][a-zA-Z0-9+.-]*:|#)([^)\s]+)\)")


def metadata_problems(metadata: Message, name: str, *, pytest_plugin: bool, pins: tuple[str, ...] = ()) -> list[str]:
    """What a METADATA / PKG-INFO lacks; ``pins``: distributions it must require at exactly ``VERSION``."""
    problems = []
    if _norm(metadata.get("Name", "")) != _norm(name):
        problems.append(f"Name is {metadata.get('Name')!r}, not {name!r}")
    if metadata.get("Version") != VERSION:
        problems.append(f"Version is {metadata.get('Version')!r}, not {VERSION!r} (the VERSION file)")
    if metadata.get("License-Expression") != LICENSE_EXPRESSION:
        problems.append(f"License-Expression is {metadata.get('License-Expression')!r}, not {LICENSE_EXPRESSION!r}")
    if LICENSE_FILE not in metadata.get_all("License-File", []):
        problems.append(f"License-File {LICENSE_FILE} is missing")
    if not metadata.get("Summary", "").strip():
        problems.append("Summary is empty")
    if metadata.get("Description-Content-Type") != "text/markdown" or not metadata.get_payload():
        problems.append("the README is not the long description (text/markdown)")
    relative = sorted(set(_RELATIVE_LINK.findall(str(metadata.get_payload()))))
    if relative:
        problems.append(f"the long description links to repository paths that are dead on PyPI: {relative[:3]}")
    if not metadata.get("Requires-Python"):
        problems.append("Requires-Python is missing")
    classifiers = metadata.get_all("Classifier", [])
    wanted = [*PYTHON_CLASSIFIERS, *(["Framework :: Pytest"] if pytest_plugin else [])]
    problems += [f"classifier {c!r} is missing" for c in wanted if c not in classifiers]
    urls = dict(u.split(", ", 1) for u in metadata.get_all("Project-URL", []) if ", " in u)
    for label in PROJECT_URLS:
        if not urls.get(label, "").startswith(URL_PREFIX):
            problems.append(f"Project-URL {label} is missing or not under {URL_PREFIX}")
    requires = metadata.get_all("Requires-Dist", [])
    problems += [f"Requires-Dist {pin}=={VERSION} is missing" for pin in pins if f"{pin}=={VERSION}" not in requires]
    return problems


def _has_pytest_plugin(entry_points: str) -> bool:
    return re.search(r"^\[pytest11\]", entry_points, re.MULTILINE) is not None


def check_wheel_metadata(wheel: Path, name: str, pins: tuple[str, ...] = ()) -> list[str]:
    """METADATA problems of one wheel, and a missing license file in its dist-info."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        dist_info = next((n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA")), None)
        if dist_info is None:
            return [f"{wheel.name}: no .dist-info/METADATA"]
        metadata = email.parser.BytesParser().parsebytes(archive.read(f"{dist_info}/METADATA"))
        scripts = f"{dist_info}/entry_points.txt"
        entry_points = archive.read(scripts).decode() if scripts in names else ""
        problems = metadata_problems(metadata, name, pytest_plugin=_has_pytest_plugin(entry_points), pins=pins)
        if f"{dist_info}/licenses/{LICENSE_FILE}" not in names:
            problems.append(f"{dist_info}/licenses/{LICENSE_FILE} is missing")
    return [f"{wheel.name}: {p}" for p in problems]


def check_sdist(sdist: Path, package: Path, pins: tuple[str, ...] = ()) -> list[str]:
    """An sdist: its top folder holds PKG-INFO (full metadata), pyproject.toml, README.md and LICENSE; no
    absolute or ``..`` paths, no text naming the checkout."""
    config = tomllib.loads((package / "pyproject.toml").read_text())
    name = config["project"]["name"]
    top = f"{_norm(name)}-{VERSION}"
    checkout = str(ROOT).encode()
    problems: list[str] = []
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if m.isfile()]
        for member in members:
            parts = PurePosixPath(member.name).parts
            if member.name.startswith("/") or ".." in parts or not parts or parts[0] != top:
                problems.append(f"{member.name}: not inside {top}/")
            elif checkout in _read_member(archive, member):
                problems.append(f"{member.name}: names the checkout path {ROOT}")
        names = {m.name for m in members}
        problems += [f"{top}/{f} is missing" for f in SDIST_FILES if f"{top}/{f}" not in names]
        if f"{top}/PKG-INFO" in names:
            pkg_info = _read_member(archive, archive.getmember(f"{top}/PKG-INFO"))
            metadata = email.parser.BytesParser().parsebytes(pkg_info)
            plugin = "pytest11" in config["project"].get("entry-points", {})
            problems += metadata_problems(metadata, name, pytest_plugin=plugin, pins=pins)
    return [f"{sdist.name}: {p}" for p in problems]


def _read_member(archive: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    handle = archive.extractfile(member)
    return handle.read() if handle is not None else b""


def _pins(package: Path) -> tuple[str, ...]:
    """The distributions the meta-package pins (its hatch_build.py hook's ``members``); none for the others."""
    config = tomllib.loads((package / "pyproject.toml").read_text())
    if config["project"]["name"] != META:
        return ()
    return tuple(config["tool"]["hatch"]["metadata"]["hooks"]["custom"]["members"])


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


def main(dist: Path, *, sdist: bool = False) -> int:
    members = sorted(p for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").is_file())
    wheels = sorted(dist.glob("*.whl"))
    sdists = sorted(dist.glob("*.tar.gz"))
    problems: list[str] = []
    for package in members:
        project_name = tomllib.loads((package / "pyproject.toml").read_text())["project"]["name"]
        name = _norm(project_name)
        built = [w for w in wheels if _norm(w.name.split("-")[0]) == name]
        if len(built) != 1:
            problems.append(f"{package.name}: expected one wheel for {name} in {dist}, found {len(built)}")
            continue
        found = check_wheel(built[0], package) + check_wheel_metadata(built[0], project_name, _pins(package))
        if sdist:
            sources = [s for s in sdists if s.name.rsplit("-", 1)[0] == name]
            if len(sources) != 1:
                found.append(f"{package.name}: expected one sdist for {name} in {dist}, found {len(sources)}")
            else:
                found += check_sdist(sources[0], package, _pins(package))
        problems += found
        shipped = len(_expected_files(package))
        what = "wheel and sdist" if sdist else "wheel"
        print(f"{built[0].name}: {'FAIL' if found else 'ok'} ({what}; {shipped} files from src/; {VERSION})")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    arguments = sys.argv[1:]
    with_sdist = "--sdist" in arguments
    paths = [a for a in arguments if a != "--sdist"]
    if len(paths) != 1:
        sys.exit(__doc__)
    sys.exit(main(Path(paths[0]), sdist=with_sdist))
