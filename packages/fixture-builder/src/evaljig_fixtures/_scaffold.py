"""What ``evaljig init`` writes and where: the layout, the rendered templates and workflow, written all or nothing."""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path, PurePosixPath
from string import Template

from evaljig_common import write_bytes_atomic
from evaljig_fixtures._errors import EvaljigFixturesError

# --- Where ``evaljig init`` puts the scaffold: the team's tests folder and scripts folder, and what follows from them.
#
# Everything is derived from two repository-relative folders, so the builder, the LEV tests, the
# workflow, the ``.gitignore`` line and every hint ``init`` prints name the same places:
#
# - ``tests_dir`` (``--tests-dir``, default ``backend/tests``): the LEV tests go in ``<tests_dir>/lighteval``;
#   pytest runs from its parent (the *run folder*, ``backend``), where per-case reports land in ``reports/``;
# - ``scripts_dir`` (``--scripts-dir``, default ``scripts/testing``): the builder ``build_lighteval_fixture.py``.
DEFAULT_TESTS_DIR = "backend/tests"
DEFAULT_SCRIPTS_DIR = "scripts/testing"
BUILD_SCRIPT_NAME = "build_lighteval_fixture.py"
#: A folder name in the scaffold's paths: safe in Python, YAML, shell and .gitignore without quoting.
_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$")


def folder(value: str, option: str) -> tuple[str, ...]:
    """A repository-relative folder as its parts; ``EvaljigFixturesError`` naming the option otherwise."""
    path = PurePosixPath(value)
    parts = tuple(p for p in path.parts if p != ".")
    if path.is_absolute() or "\\" in value or not parts or not all(_PART.match(p) for p in parts) or len(parts) > 8:
        raise EvaljigFixturesError(
            f"{option} {value!r}: must be a folder inside the repository, such as {DEFAULT_TESTS_DIR}: relative, "
            "'/'-separated names of letters, digits, '.', '_' and '-' (no '..')"
        )
    return parts


@dataclass(frozen=True)
class Layout:
    """The scaffold's places, as POSIX paths relative to the repository's root."""

    tests: tuple[str, ...] = tuple(DEFAULT_TESTS_DIR.split("/"))
    scripts: tuple[str, ...] = tuple(DEFAULT_SCRIPTS_DIR.split("/"))

    @classmethod
    def parse(cls, tests_dir: str, scripts_dir: str) -> Layout:
        layout = cls(folder(tests_dir, "--tests-dir"), folder(scripts_dir, "--scripts-dir"))
        if layout.scripts[: len(layout.lev_parts)] == layout.lev_parts:
            raise EvaljigFixturesError(
                f"--scripts-dir {scripts_dir!r}: must not lie inside the LEV tests folder {layout.lev}"
            )
        return layout

    @property
    def lev_parts(self) -> tuple[str, ...]:
        return (*self.tests, "lighteval")

    @property
    def lev(self) -> str:
        """The LEV tests' folder (``backend/tests/lighteval``)."""
        return "/".join(self.lev_parts)

    @property
    def fixtures(self) -> str:
        return f"{self.lev}/fixtures"

    @property
    def script(self) -> str:
        """The builder, from the root (``scripts/testing/build_lighteval_fixture.py``)."""
        return "/".join((*self.scripts, BUILD_SCRIPT_NAME))

    @property
    def run_parts(self) -> tuple[str, ...]:
        """The run folder: where pytest and the builder are run from (the tests folder's parent)."""
        return self.tests[:-1]

    @property
    def run_dir(self) -> str:
        """The run folder as a path (``backend``; ``.`` for the root)."""
        return "/".join(self.run_parts) or "."

    @property
    def run_path(self) -> str:
        """The run folder as a prefix (``backend/``; empty for the root)."""
        return "".join(f"{p}/" for p in self.run_parts)

    @property
    def script_from_run(self) -> str:
        """The builder as the run folder sees it (``../scripts/testing/build_lighteval_fixture.py``)."""
        return _relative(self.script, self.run_dir)

    @property
    def lev_from_run(self) -> str:
        """The LEV folder as the run folder sees it (``tests/lighteval``)."""
        return _relative(self.lev, self.run_dir)

    @property
    def reports_ignore(self) -> str:
        """The ``.gitignore`` line for the per-case reports (anchored: ``backend/reports/``, ``/reports/``)."""
        return f"{self.run_path}reports/" if self.run_parts else "/reports/"

    def from_root(self, command: str) -> str:
        """``command`` run from the root as one shell command: ``cd backend && command``, or just it."""
        return f"cd {self.run_dir} && {command}" if self.run_parts else command

    def in_run_dir(self, command: str) -> str:
        """``command`` as a user types it from the root: ``(cd backend && command)``, or just it."""
        return f"({self.from_root(command)})" if self.run_parts else command


def _relative(path: str, start: str) -> str:
    return PurePosixPath(os.path.relpath(path, start)).as_posix()


# --- How ``evaljig init``'s options become the scaffold's files: every value in code is a literal, never pasted text.
#
# A value in generated Python is rendered by ``literal`` (``json.dumps`` for printable ASCII, else
# ``repr``; either way a string literal that evaluates back to exactly the value), so a ``"`` in a
# model name cannot end a string and smuggle in a key such as ``base_url``. Values that also
# appear in prose (docstrings, comments, YAML, shell lines) are names ``plain`` accepts:
# validated beforehand (provider, key variable, dataset and folder names), so no quoting is needed
# there. The model name is validated too (``check_model``), before anything is written.
MODEL_PREFIX = "openai/"
#: A model id as OpenAI-compatible servers name them (gpt-4o-mini, meta-llama/Llama-3.1-8B, qwen2.5:7b, ft:...@org).
_MODEL = re.compile(r"^openai/[A-Za-z0-9][A-Za-z0-9._:@+/=-]{0,199}$")
_PLAIN = re.compile(r"^[A-Za-z0-9._/-]*$")
_PLACEHOLDER = re.compile(r"\[\[(\w+)\]\]")


def check_model(model: str) -> str:
    """``model`` when it is litellm's ``openai/`` prefix and a plain model id; ``EvaljigFixturesError`` otherwise."""
    if not _MODEL.match(model):
        raise EvaljigFixturesError(
            f"--model {model[:120]!r}: must be {MODEL_PREFIX!r} followed by a model id of letters, digits and "
            "'.', '_', ':', '@', '+', '=', '/', '-' (at most 200 characters), such as openai/gpt-4o-mini"
        )
    return model


def literal(value: str) -> str:
    """A Python string literal for ``value`` (double-quoted where JSON's escaping is Python's too)."""
    text = json.dumps(value) if value.isascii() and value.isprintable() else repr(value)
    if ast.literal_eval(text) != value:  # pragma: no cover - json.dumps and repr both round-trip these
        raise AssertionError(f"cannot render {value!r} as a literal")
    return text


def literal_parts(parts: tuple[str, ...]) -> str:
    """A tuple literal of path parts: ``("backend", "tests", "lighteval")``."""
    return "(" + ", ".join(literal(p) for p in parts) + ("," if len(parts) == 1 else "") + ")"


def plain(value: str) -> str:
    """``value`` for prose and YAML: a name that needs no quoting anywhere (checked, never escaped)."""
    if not _PLAIN.match(value):  # pragma: no cover - callers validate first; this keeps it so
        raise AssertionError(f"{value!r} is not a plain name")
    return value


def python_template(name: str, values: Mapping[str, str]) -> bytes:
    """A ``.py.tmpl`` of the scaffold with ``$name`` placeholders filled (``string.Template``; every one required)."""
    text = files("evaljig_fixtures").joinpath("data", "scaffold", name).read_text(encoding="utf-8")
    rendered = Template(text).substitute(values)
    ast.parse(rendered)  # generated Python must parse, whatever the options were
    return rendered.encode("utf-8")


def text_template(name: str, values: Mapping[str, str]) -> bytes:
    """A template whose text has ``$`` of its own (a workflow's ``${{ }}``): ``[[name]]`` placeholders, all known."""
    text = files("evaljig_fixtures").joinpath("data", "scaffold", name).read_text(encoding="utf-8")
    unknown = sorted({m for m in _PLACEHOLDER.findall(text) if m not in values})
    if unknown:  # pragma: no cover - a template and its values change together
        raise AssertionError(f"{name}: no value for {', '.join(unknown)}")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text).encode("utf-8")


# --- Write a set of files all or none: ``evaljig init`` never leaves a half-written scaffold.
#
# Three steps: refuse a target that exists but is not a regular file (a folder named
# ``.gitignore``, a symlink); write every file's new content to a hidden temporary sibling
# (creating missing folders); then rename each over its target. If anything fails on the way,
# every file already renamed gets its previous content back (or is removed if it is new), the
# temporary files and the folders this call created are removed, and the error is raised. What
# is left is the tree as it was, whatever step failed; only a crash of the process itself between
# two renames (a kill -9) could leave part of it, and a rerun with ``--force`` completes it.
_TMP = ".evaljig-init.tmp"


def write_all(root: Path, files: Mapping[str, bytes]) -> None:
    """Write ``files`` (root-relative POSIX path -> bytes) under ``root``: every one, or none."""
    targets = {relative: root.joinpath(*PurePosixPath(relative).parts) for relative in sorted(files)}
    previous = {relative: _previous(relative, path) for relative, path in targets.items()}
    created: list[Path] = []
    staged: dict[str, Path] = {}
    renamed: list[str] = []
    try:
        for relative, path in targets.items():
            created += _make_parents(path.parent, root)
            tmp = path.with_name(f".{path.name}{_TMP}")
            tmp.write_bytes(files[relative])
            staged[relative] = tmp
        for relative, path in targets.items():
            staged[relative].replace(path)
            del staged[relative]
            renamed.append(relative)
    except BaseException:
        for tmp in staged.values():
            with contextlib.suppress(OSError):
                tmp.unlink()
        for relative in reversed(renamed):
            _restore(targets[relative], previous[relative])
        for folder in reversed(created):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _previous(relative: str, path: Path) -> bytes | None:
    """What ``path`` holds now (None: nothing); a target that is no regular file is refused before any write."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise EvaljigFixturesError(f"{relative}: a folder on its way is a file; move it away and rerun") from None
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a symlink" if stat.S_ISLNK(mode) else "not a regular file"
        raise EvaljigFixturesError(f"{relative}: exists and is {kind}, not a file init writes; move it away and rerun")
    return path.read_bytes()


def _make_parents(folder: Path, root: Path) -> list[Path]:
    """Create ``folder`` and its missing parents up to ``root``; the ones created, outermost first."""
    missing = []
    while folder != root and not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()
    return list(reversed(missing))


def _restore(path: Path, data: bytes | None) -> None:
    with contextlib.suppress(OSError):
        if data is None:
            path.unlink()
        else:
            write_bytes_atomic(path, data)


# --- The scaffold's GitHub workflow: LEV tests installed as docs/project.md says, and two pull-request comments.
#
# ``pip`` installs ``evaljig[lighteval]`` from the wheels folder (``--find-links``) until evaljig is
# on PyPI; ``uv`` syncs the team's uv project (``uv sync --locked``, the folder in ``[tool.uv]
# find-links``) and runs every command with ``uv run --frozen``. On a pull request the report job
# posts ``evaljig-report comment`` and the review job ``evaljig review --markdown``, each as the
# one comment whose first line is its marker, found and updated by ``UPSERT_COMMENT``.
INSTALLERS = ("pip", "uv")
#: What the scaffolded suite runs with beside ``evaljig[lighteval]``: pytest-cov (its ``--no-cov``),
#: pytest-split (the workflow's groups) and pytest-xdist (``-n auto``: the cases side by side, each
#: worker with its own gateway; 59 s instead of 89 s for the scaffold's seven cases on 2 cores).
TEAM_TEST_PACKAGES = ("pytest-cov", "pytest-split", "pytest-xdist")
#: How the scaffolded LEV suite is run, from its run folder (docs/project.md, the workflow, ``init``'s last line).
LEV_SUITE_COMMAND = "pytest -m lighteval --no-cov -n auto"
UPSERT_COMMENT = """\
const fs = require("fs");
const marker = process.env.MARKER;
let body = fs.readFileSync(process.env.BODY_FILE, "utf8");
if (!body.startsWith(marker)) body = `${marker}\\n${body}`;
const { owner, repo } = context.repo;
const issue_number = context.issue.number;
const comments = await github.paginate(github.rest.issues.listComments, { owner, repo, issue_number, per_page: 100 });
const mine = comments.find((c) => c.user?.login === "github-actions[bot]" && (c.body || "").startsWith(marker));
if (mine) {
  await github.rest.issues.updateComment({ owner, repo, comment_id: mine.id, body });
} else {
  await github.rest.issues.createComment({ owner, repo, issue_number, body });
}"""


def render_workflow(layout: Layout, installer: str, wheels: str) -> bytes:
    """``.github/workflows/lighteval.yml`` for ``layout``, installing with ``installer`` from ``wheels``."""
    wheels = plain(wheels)
    packages = " ".join(TEAM_TEST_PACKAGES)
    if installer == "uv":
        install = f"""\
      - uses: actions/setup-python@v6
        with:
          python-version: "3.11"
      - uses: astral-sh/setup-uv@v7
      # pyproject.toml names {wheels}/ in [tool.uv] find-links until evaljig is on PyPI
      - name: install the project with uv
        run: uv sync --locked"""
        run, freeze = "uv run --frozen ", "uv pip freeze"
    else:
        install = f"""\
      - uses: actions/setup-python@v6
        with:
          python-version: "3.11"
          cache: pip
      # evaljig's wheels from {wheels}/ until it is on PyPI; add your project's own install here
      - name: install evaljig with the lighteval stack
        run: |
          python -m pip install --upgrade pip
          python -m pip install --find-links "$GITHUB_WORKSPACE/{wheels}" 'evaljig[lighteval]' {packages}
          python -m pip check"""
        run, freeze = "", "python -m pip freeze"
    upsert = "\n".join(f"            {line}" if line else "" for line in UPSERT_COMMENT.splitlines())
    return text_template(
        "lighteval.yml.tmpl",
        {
            "installer": installer, "wheels": wheels, "run_dir": plain(layout.run_dir),
            "run_path": plain(layout.run_path), "install_steps": install, "run": run, "freeze": freeze,
            "upsert_comment": upsert, "lev_suite": LEV_SUITE_COMMAND,
        },
    )  # fmt: skip
