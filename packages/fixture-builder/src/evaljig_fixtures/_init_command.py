"""``evaljig init``: scaffold the LightEval contract (LEV) tests into an existing repository, where the team keeps them.

Writes (relative to ``PATH``, default the current folder, as ``git init PATH`` and ``uv init PATH``
take it; the folders shown are the defaults of ``--tests-dir backend/tests`` and
``--scripts-dir scripts/testing``)::

    backend/tests/lighteval/{conftest,lev_paths}.py                     shared fixtures and paths
    backend/tests/lighteval/test_{cli,python,replay}_contract.py        the LEV cases
    backend/tests/lighteval/data/<dataset>.jsonl, multilingual.jsonl   the rows the packages are built from
    scripts/testing/build_lighteval_fixture.py                          the fixtures' builder (regen_main)
    .github/workflows/lighteval.yml                                     LEV tests, review and report comments
    .gitignore                                                          backend/reports/ appended when missing

all or nothing (``_scaffold.transaction``), then runs the builder from the tests folder's parent
(``backend/``), which writes ``backend/tests/lighteval/fixtures/`` (provider spec, dataset
packages, ``expected-config.yaml`` and, with lighteval installed, ``expected-cli-stdout.txt``, a
cassette of a recorded run and that run's table: those are the real lighteval's own output, so
they need a real run). Without lighteval it says so and how to finish. Nothing is overwritten
without ``--force``. Every option reaches generated code as a literal (``_scaffold.render``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from evaljig_common import CANONICAL_BASE_URL
from evaljig_config import ConfigError, lighteval_available, parse_provider_spec
from evaljig_fixtures._dataset_write import DatasetSource, read_rows_jsonl, rows_jsonl
from evaljig_fixtures._errors import EvaljigFixturesError
from evaljig_fixtures._scaffold import (
    DEFAULT_SCRIPTS_DIR,
    DEFAULT_TESTS_DIR,
    INSTALLERS,
    LEV_SUITE_COMMAND,
    TEAM_TEST_PACKAGES,
    Layout,
    check_model,
    folder,
    literal,
    literal_parts,
    plain,
    python_template,
    render_workflow,
    write_all,
)

PROG = "evaljig init"
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
GITIGNORE_COMMENT = "# evaljig LEV tests: per-case reports"
WORKFLOW = ".github/workflows/lighteval.yml"
DEFAULT_WHEELS = "wheels"
#: Scaffold template -> its file name in the LEV folder (``None``: the builder, in the scripts folder).
TEMPLATES: dict[str, str | None] = {
    "conftest.py.tmpl": "conftest.py",
    # not utils.py: a team's own `utils` imported first would shadow it (modules are cached by name)
    "lev_paths.py.tmpl": "lev_paths.py",
    "test_cli_contract.py.tmpl": "test_cli_contract.py",
    "test_python_contract.py.tmpl": "test_python_contract.py",
    "test_replay_contract.py.tmpl": "test_replay_contract.py",
    "build_lighteval_fixture.py.tmpl": None,
}


@dataclass(frozen=True)
class Options:
    root: Path
    provider: str
    model: str
    api_key_env: str
    dataset: Path | None
    force: bool
    build: bool
    layout: Layout = field(default_factory=Layout)
    installer: str = "pip"
    wheels: str = DEFAULT_WHEELS

    @property
    def dataset_name(self) -> str:
        if self.dataset is None:
            return "mini-mmlu"
        stem = self.dataset.name.split(".")[0].lower()
        return "".join(c if c.isalnum() and c.isascii() else "-" for c in stem).strip("-") or "dataset"

    @property
    def script(self) -> str:
        return self.layout.script


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Scaffold LightEval contract tests (LEV-001..005, LEV-008, LEV-010) into an existing repository.",
    )
    parser.add_argument(
        "path", nargs="?", type=Path, default=Path(), metavar="PATH",
        help="the repository's root (default: here); created when missing, as git init and uv init do",
    )  # fmt: skip
    parser.add_argument("--provider", default="fake-openai", help="the provider's name (fixtures/providers/NAME.json)")
    parser.add_argument("--model", default="openai/gpt-stub", help="the model, with litellm's openai/ prefix")
    parser.add_argument(
        "--api-key-env", default="EVALJIG_FAKE_API_KEY", help="the NAME of the variable holding the key (any name)"
    )
    parser.add_argument("--dataset", type=Path, metavar="JSONL", help="your rows: {question, choices, answer} lines")
    parser.add_argument(
        "--tests-dir", default=DEFAULT_TESTS_DIR, metavar="DIR",
        help=f"your tests folder, from the root (default: {DEFAULT_TESTS_DIR}); the LEV tests go in DIR/lighteval "
        "and pytest runs from DIR's parent",
    )  # fmt: skip
    parser.add_argument(
        "--scripts-dir", default=DEFAULT_SCRIPTS_DIR, metavar="DIR",
        help=f"where the fixtures' build script goes, from the root (default: {DEFAULT_SCRIPTS_DIR})",
    )  # fmt: skip
    parser.add_argument(
        "--installer", choices=("auto", *INSTALLERS), default="auto",
        help="how the workflow installs: pip, or uv (a uv project); auto: uv when the root has uv.lock",
    )  # fmt: skip
    parser.add_argument(
        "--wheels", default=DEFAULT_WHEELS, metavar="DIR",
        help=f"the folder (from the root) holding evaljig's wheels until it is on PyPI (default: {DEFAULT_WHEELS})",
    )  # fmt: skip
    parser.add_argument("--force", action="store_true", help="overwrite files that exist")
    parser.add_argument("--no-build", action="store_true", help="do not run the builder (fixtures/ stays unwritten)")
    return parser


def _spec(options: Options) -> dict[str, Any]:
    return {
        "name": options.provider,
        "base_url": CANONICAL_BASE_URL,
        "model": options.model,
        "api_key_env": options.api_key_env,
    }


def _sample_rows(filename: str) -> bytes:
    """evaljig's own sample questions (``data/scaffold/*.jsonl``, the rows of its own fixtures' datasets)."""
    return files("evaljig_fixtures").joinpath("data", "scaffold", filename).read_bytes()


def _python_values(options: Options) -> dict[str, str]:
    """``$name`` -> text for the Python templates: literals for code, validated names for prose."""
    layout, dataset = options.layout, options.dataset_name
    return {
        "provider_literal": literal(options.provider),
        "model_literal": literal(options.model),
        "api_key_env_literal": literal(options.api_key_env),
        "dataset_literal": literal(dataset),
        "provider_file_literal": literal(f"providers/{options.provider}.json"),
        "dataset_file_literal": literal(f"datasets/{dataset}.zip"),
        "dataset_rows_literal": literal(f"{dataset}.jsonl"),
        "cassette_file_literal": literal(f"cassettes/{dataset}.yaml"),
        "lev_parts": literal_parts(layout.lev_parts),
        "script_parts": literal_parts((*layout.scripts, layout.script.rsplit("/", 1)[1])),
        "script_depth": str(len(layout.scripts)),
        "lev_depth": str(len(layout.tests)),
        "run_builder_literal": literal(layout.from_root(f"python {layout.script_from_run}")),
        # prose: names validated before anything is rendered
        "api_key_env": plain(options.api_key_env),
        "dataset": plain(dataset),
        "fixtures": plain(layout.fixtures),
        "run_dir": plain(layout.run_dir),
        "script": plain(layout.script_from_run),
        "script_from_root": plain(layout.script),
        "lev_from_run": plain(layout.lev_from_run),
    }


def planned_files(options: Options) -> dict[str, bytes]:
    """Relative path -> bytes of every file ``init`` writes (the ``.gitignore`` and fixtures/ aside)."""
    layout, values = options.layout, _python_values(options)
    planned = {
        (f"{layout.lev}/{name}" if name else layout.script): python_template(template, values)
        for template, name in TEMPLATES.items()
    }
    planned[WORKFLOW] = render_workflow(layout, options.installer, options.wheels)
    rows = rows_jsonl(read_rows_jsonl(options.dataset)) if options.dataset else _sample_rows("mini-mmlu.jsonl")
    planned[f"{layout.lev}/data/{options.dataset_name}.jsonl"] = rows
    planned[f"{layout.lev}/data/multilingual.jsonl"] = _sample_rows("polyglot.jsonl")
    return planned


def fixture_outputs(options: Options) -> list[str]:
    """The files the builder writes, relative to the root (an existing one counts as overwritten too)."""
    fixtures = options.layout.fixtures
    return [
        f"{fixtures}/providers/{options.provider}.json",
        f"{fixtures}/datasets/{options.dataset_name}.zip",
        f"{fixtures}/datasets/multilingual.zip",
        f"{fixtures}/configs/expected-config.yaml",
        f"{fixtures}/configs/expected-cli-stdout.txt",
        f"{fixtures}/configs/recorded-cli-stdout.txt",
        f"{fixtures}/cassettes/{options.dataset_name}.yaml",
    ]


def _check_inputs(options: Options) -> None:
    """Every input problem before anything is written: the spec, the model, the rows, the names."""
    if not options.provider or not all(c.isascii() and (c.isalnum() or c in "-_.") for c in options.provider):
        raise EvaljigFixturesError(f"--provider {options.provider!r}: use letters, digits, '-', '_' and '.'")
    check_model(options.model)
    try:
        parse_provider_spec(_spec(options), source="--provider/--model/--api-key-env")
    except ConfigError as exc:
        raise EvaljigFixturesError(str(exc)) from exc
    if options.dataset is not None:
        DatasetSource(options.dataset, name=options.dataset_name).checked_rows()  # BuildError naming file, row, field
    if options.dataset_name == "multilingual":
        raise EvaljigFixturesError("--dataset: the name 'multilingual' is taken by the scaffold's LEV-005 dataset")


def _gitignore(root: Path, layout: Layout) -> bytes | None:
    """The ``.gitignore`` with the missing lines appended; None when nothing is missing."""
    path = root / ".gitignore"
    text = path.read_text(encoding="utf-8") if path.is_file() and not path.is_symlink() else ""
    missing = [line for line in (GITIGNORE_COMMENT, layout.reports_ignore) if line not in text.splitlines()]
    if not missing:
        return None
    separator = "" if not text or text.endswith("\n") else "\n"
    return (text + separator + "\n".join(missing) + "\n").encode("utf-8")


def scaffold(options: Options, echo: Any = print) -> int:
    _check_inputs(options)
    layout, root = options.layout, options.root
    try:
        root.mkdir(parents=True, exist_ok=True)  # only once every input is known to be good
    except OSError as exc:
        echo(f"{PROG}: {root}: cannot create the folder: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILED
    planned = planned_files(options)
    changed = [r for r in planned if (root / r).exists() and (root / r).read_bytes() != planned[r]]
    sources_changed = any(r == layout.script or r.startswith(f"{layout.lev}/data/") for r in changed)
    rebuilt = fixture_outputs(options) if options.build and sources_changed else []  # same sources, same bytes
    existing = [*changed, *(r for r in rebuilt if (root / r).exists())]
    if existing and not options.force:
        echo(f"{PROG}: would overwrite {', '.join(sorted(existing))}; pass --force to replace them", file=sys.stderr)
        return EXIT_USAGE
    gitignore = _gitignore(root, layout)
    writes = dict(planned) | ({".gitignore": gitignore} if gitignore is not None else {})
    write_all(root, writes)  # every file or none
    for relative in sorted(planned):
        echo(f"wrote {relative}")
    if gitignore is not None:
        echo("updated .gitignore")
    if options.installer == "uv":
        echo(
            "uv: the workflow runs `uv sync --locked`: add evaljig to your project with `uv add "
            f"'evaljig[lighteval]' {' '.join(TEAM_TEST_PACKAGES)}` ({options.wheels}/ in [tool.uv] find-links until it "
            "is on PyPI)"
        )
    if not options.build:
        echo(f"next: {layout.in_run_dir(f'python {layout.script_from_run}')} writes {layout.fixtures}/")
        return EXIT_OK
    return _build(root, layout, echo)


def _build(root: Path, layout: Layout, echo: Any) -> int:
    """Run the scaffold's builder from the run folder, exactly as a user would."""
    builder = f"python {layout.script_from_run}"
    echo(f"running the builder: {layout.in_run_dir(builder)}")
    done = subprocess.run(
        [sys.executable, layout.script_from_run], cwd=root.joinpath(*layout.run_parts), check=False
    )  # fmt: skip
    if done.returncode != 0:
        echo(f"{PROG}: the builder failed (exit {done.returncode}); fix what it printed and rerun it", file=sys.stderr)
        return EXIT_FAILED
    if not lighteval_available():
        echo(
            "lighteval is not installed here, so configs/expected-cli-stdout.txt and the cassette (the real "
            "lighteval's output) are not written yet: pip install 'evaljig[lighteval]', "
            f"then run `{layout.in_run_dir(builder)}`"
        )
    else:
        echo(f"done: run `{layout.in_run_dir(LEV_SUITE_COMMAND)}`, then commit the files above")
    return EXIT_OK


def init_main(argv: Sequence[str] | None = None) -> int:
    """``evaljig init [PATH] [--provider NAME] [--model M] [--api-key-env VAR] [--dataset JSONL] [--tests-dir DIR]
    [--scripts-dir DIR] [--installer pip|uv] [--wheels DIR] [--force] [--no-build]``.

    ``PATH`` is the repository's root, as ``git init PATH`` and ``uv init PATH`` take it.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if args.path.exists() and not args.path.is_dir():
        print(f"{PROG}: {args.path}: exists and is not a folder; give the repository's root folder", file=sys.stderr)
        return EXIT_USAGE
    try:
        layout = Layout.parse(args.tests_dir, args.scripts_dir)
        wheels = "/".join(folder(args.wheels, "--wheels"))
        root = args.path.resolve()
        installer = args.installer if args.installer != "auto" else "uv" if (root / "uv.lock").is_file() else "pip"
        options = Options(
            root=root, provider=args.provider, model=args.model, api_key_env=args.api_key_env,
            dataset=args.dataset, force=args.force, build=not args.no_build, layout=layout, installer=installer,
            wheels=wheels,
        )  # fmt: skip
        return scaffold(options)
    except EvaljigFixturesError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"{PROG}: {exc.filename or 'output'}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILED
