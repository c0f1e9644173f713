"""``evaljig init``: scaffold the LightEval contract (LEV) tests into an existing repository.

Writes (relative to ``PATH``, default the current folder, as ``git init PATH`` and ``uv init PATH`` take it)::

    backend/tests/lighteval/{conftest,lev_paths}.py                     shared fixtures and paths
    backend/tests/lighteval/test_{cli,python,replay}_contract.py        the LEV cases
    backend/tests/lighteval/data/<dataset>.jsonl, multilingual.jsonl   the rows the packages are built from
    scripts/testing/build_lighteval_fixture.py                          the fixtures' builder (regen_main)
    .github/workflows/lighteval.yml                                     pytest -m lighteval --no-cov, reports uploaded
    .gitignore                                                          lines appended when missing

then runs the builder from ``backend/``, which writes ``backend/tests/lighteval/fixtures/``
(provider spec, dataset packages, ``expected-config.yaml`` and, with lighteval installed,
``expected-cli-stdout.txt``, a cassette of a recorded run and that run's table: those are the
real lighteval's own output, so they need a real run). Without lighteval it says so and how to
finish. Nothing is overwritten without ``--force``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from string import Template
from typing import Any

from evaljig_common import write_bytes_atomic
from evaljig_config import ConfigError, lighteval_available, parse_provider_spec
from evaljig_fixtures._datasets.source import load_dataset_source
from evaljig_fixtures._datasets.team import dataset_source, read_rows_jsonl
from evaljig_fixtures._errors import EvaljigFixturesError

PROG = "evaljig init"
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
LEV = "backend/tests/lighteval"
BUILD_SCRIPT = "scripts/testing/build_lighteval_fixture.py"
GITIGNORE_LINES = ("# evaljig LEV tests: per-case reports", "backend/reports/")
#: Scaffold template -> where it goes; templated files have ``.tmpl`` and take ``$provider`` & co.
TEMPLATES = {
    "conftest.py.tmpl": f"{LEV}/conftest.py",
    # not utils.py: a team's own `utils` imported first would shadow it (modules are cached by name)
    "lev_paths.py.tmpl": f"{LEV}/lev_paths.py",
    "test_cli_contract.py.tmpl": f"{LEV}/test_cli_contract.py",
    "test_python_contract.py.tmpl": f"{LEV}/test_python_contract.py",
    "test_replay_contract.py.tmpl": f"{LEV}/test_replay_contract.py",
    "build_lighteval_fixture.py.tmpl": BUILD_SCRIPT,
}
VERBATIM = {"lighteval.yml.tmpl": ".github/workflows/lighteval.yml"}


@dataclass(frozen=True)
class Options:
    root: Path
    provider: str
    model: str
    api_key_env: str
    dataset: Path | None
    force: bool
    build: bool

    @property
    def dataset_name(self) -> str:
        if self.dataset is None:
            return "mini-mmlu"
        stem = self.dataset.name.split(".")[0].lower()
        return "".join(c if c.isalnum() else "-" for c in stem).strip("-") or "dataset"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Scaffold LightEval contract tests (LEV-001..005) into an existing repository."
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
    parser.add_argument("--force", action="store_true", help="overwrite files that exist")
    parser.add_argument("--no-build", action="store_true", help="do not run the builder (fixtures/ stays unwritten)")
    return parser


def _spec(options: Options) -> dict[str, Any]:
    return {
        "name": options.provider,
        "base_url": "http://127.0.0.1:8000/v1",
        "model": options.model,
        "api_key_env": options.api_key_env,
    }


def _jsonl(rows: Sequence[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def _packaged_rows(filename: str) -> list[dict[str, Any]]:
    """evaljig's own sample questions as ``{question, choices, answer}`` rows (ids and subjects kept)."""
    return [dict(row) for row in load_dataset_source(filename).rows]


def planned_files(options: Options) -> dict[str, bytes]:
    """Relative path -> bytes of every file ``init`` writes (the ``.gitignore`` and fixtures/ aside)."""
    values = {
        "provider": options.provider,
        "model": options.model,
        "api_key_env": options.api_key_env,
        "dataset": options.dataset_name,
    }
    scaffold = files("evaljig_fixtures").joinpath("data", "scaffold")
    planned = {
        target: Template(scaffold.joinpath(name).read_text(encoding="utf-8")).substitute(values).encode("utf-8")
        for name, target in TEMPLATES.items()
    }
    planned |= {target: scaffold.joinpath(name).read_bytes() for name, target in VERBATIM.items()}
    rows = read_rows_jsonl(options.dataset) if options.dataset else _packaged_rows("mini_mmlu.json")
    planned[f"{LEV}/data/{options.dataset_name}.jsonl"] = _jsonl(rows)
    planned[f"{LEV}/data/multilingual.jsonl"] = _jsonl(_packaged_rows("polyglot.json"))
    return planned


def fixture_outputs(options: Options) -> list[str]:
    """The files the builder writes, relative to the root (an existing one counts as overwritten too)."""
    fixtures = f"{LEV}/fixtures"
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
    """Every input problem before anything is written: the spec, the rows, the names."""
    try:
        parse_provider_spec(_spec(options), source="--provider/--model/--api-key-env")
    except ConfigError as exc:
        raise EvaljigFixturesError(str(exc)) from exc
    if not options.provider or not all(c.isalnum() or c in "-_." for c in options.provider):
        raise EvaljigFixturesError(f"--provider {options.provider!r}: use letters, digits, '-', '_' and '.'")
    if options.dataset is not None:
        dataset_source(options.dataset, name=options.dataset_name)  # BuildError naming the file, row and field
    if options.dataset_name == "multilingual":
        raise EvaljigFixturesError("--dataset: the name 'multilingual' is taken by the scaffold's LEV-005 dataset")


def _gitignore(root: Path) -> bytes | None:
    """The ``.gitignore`` with the missing lines appended; None when nothing is missing."""
    path = root / ".gitignore"
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    missing = [line for line in GITIGNORE_LINES if line not in text.splitlines()]
    if not missing:
        return None
    separator = "" if not text or text.endswith("\n") else "\n"
    return (text + separator + "\n".join(missing) + "\n").encode("utf-8")


def scaffold(options: Options, echo: Any = print) -> int:
    _check_inputs(options)
    planned = planned_files(options)
    root = options.root
    changed = [r for r in planned if (root / r).exists() and (root / r).read_bytes() != planned[r]]
    sources_changed = any(r == BUILD_SCRIPT or r.startswith(f"{LEV}/data/") for r in changed)
    rebuilt = fixture_outputs(options) if options.build and sources_changed else []  # same sources, same bytes
    existing = [*changed, *(r for r in rebuilt if (root / r).exists())]
    if existing and not options.force:
        echo(f"{PROG}: would overwrite {', '.join(sorted(existing))}; pass --force to replace them", file=sys.stderr)
        return EXIT_USAGE
    for relative, data in sorted(planned.items()):
        write_bytes_atomic(root / relative, data)
        echo(f"wrote {relative}")
    gitignore = _gitignore(root)
    if gitignore is not None:
        write_bytes_atomic(root / ".gitignore", gitignore)
        echo("updated .gitignore")
    if not options.build:
        echo(f"next: from backend/, run `python ../{BUILD_SCRIPT}` to write tests/lighteval/fixtures/")
        return EXIT_OK
    return _build(root, echo)


def _build(root: Path, echo: Any) -> int:
    """Run the scaffold's builder from ``backend/``, exactly as a user would."""
    echo(f"running the builder: (cd backend && {Path(sys.executable).name} ../{BUILD_SCRIPT})")
    done = subprocess.run([sys.executable, f"../{BUILD_SCRIPT}"], cwd=root / "backend", check=False)
    if done.returncode != 0:
        echo(f"{PROG}: the builder failed (exit {done.returncode}); fix what it printed and rerun it", file=sys.stderr)
        return EXIT_FAILED
    if not lighteval_available():
        echo(
            "lighteval is not installed here, so configs/expected-cli-stdout.txt and the cassette (the real "
            "lighteval's output) are not written yet: pip install 'evaljig[lighteval]', "
            f"then from backend/ run `python ../{BUILD_SCRIPT}`"
        )
    else:
        echo("done: from backend/, run `pytest -m lighteval --no-cov`, then commit the files above")
    return EXIT_OK


def init_main(argv: Sequence[str] | None = None) -> int:
    """``evaljig init [PATH] [--provider NAME] [--model M] [--api-key-env VAR] [--dataset JSONL] [--force]``.

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
        args.path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"{PROG}: {args.path}: cannot create the folder: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILED
    options = Options(
        root=args.path.resolve(), provider=args.provider, model=args.model, api_key_env=args.api_key_env,
        dataset=args.dataset, force=args.force, build=not args.no_build,
    )  # fmt: skip
    try:
        return scaffold(options)
    except EvaljigFixturesError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"{PROG}: {exc.filename or 'output'}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILED
