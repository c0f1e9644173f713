"""The issue's scenario, end to end, in a team repository that ``evaljig init`` scaffolded.

A team changes its provider's temperature, runs the scaffold's build script and
``pytest --snapshot-update``; ``evaljig review`` then shows one *value changed* entry per affected
golden and fixture with the key-path diff, plus the recording that went stale (the build script
is found and read as the team's regen reads it; nothing here is configured for the review).
lighteval is not installed in this venv, so the recording is made the way a recording leaves it
(a cassette and its ``recorded-for.json``) rather than by the real lighteval.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from .gitrepo import GIT_ENV, GitRepo, make_repo


@dataclass(frozen=True)
class Layout:
    """Where ``evaljig init`` put the team's pipeline: its default, or ``--tests-dir``/``--scripts-dir``."""

    tests: str
    scripts: str

    @property
    def lev(self) -> str:
        return f"{self.tests}/lighteval"

    @property
    def fixtures(self) -> str:
        return f"{self.lev}/fixtures"

    @property
    def script(self) -> str:
        return f"{self.scripts}/build_lighteval_fixture.py"

    @property
    def runs_from(self) -> str:
        """pytest and the build script run from the tests folder's parent (the scaffold's hint says so)."""
        return str(Path(self.tests).parent)

    def init_args(self) -> list[str]:
        return [] if self == DEFAULT else ["--tests-dir", self.tests, "--scripts-dir", self.scripts]


DEFAULT = Layout("backend/tests", "scripts/testing")
#: a team whose pipeline lives in evals/ (the issue's layout)
EVALS = Layout("evals/tests", "evals/scripts")
TEAM_GOLDEN_TEST = """
import json
from pathlib import Path

import yaml

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_generation(golden):
    assert golden == json.loads((FIXTURES / "providers" / "fake-openai.json").read_text())["generation"]


def test_rendered_config(golden):
    assert golden == yaml.safe_load((FIXTURES / "configs" / "expected-config.yaml").read_text())
"""
CASSETTE = """interactions:
- request:
    body: '{"messages":[{"role":"user","content":"2 + 2 = ?"}],"model":"gpt-stub","temperature":0.0}'
    headers:
      content-type:
      - application/json
    method: POST
    uri: http://127.0.0.1:8000/v1/chat/completions
  response:
    body:
      string: '{"choices":[{"index":0,"message":{"role":"assistant","content":"B"}}]}'
    headers:
      content-type:
      - application/json
    status:
      code: 200
      message: OK
version: 1
"""


def _run(repo: GitRepo, *argv: str, cwd: str = ".") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV, "EVALJIG_REPORT": "0"}
    return subprocess.run(argv, cwd=repo.root / cwd, capture_output=True, text=True, env=env, check=False)


def _record(repo: GitRepo, layout: Layout) -> None:
    """What recording the scaffold's cassette leaves: the cassette and what it was recorded for."""
    from evaljig_config import load_provider_spec
    from evaljig_fixtures import load_dataset_package
    from evaljig_fixtures._cassettes import dump_recorded_for, recorded_for

    fixtures = repo.root / layout.fixtures
    spec = load_provider_spec(fixtures / "providers" / "fake-openai.json")
    package = load_dataset_package(fixtures / "datasets" / "mini-mmlu.zip")
    repo.write(f"{layout.fixtures}/cassettes/mini-mmlu.yaml", CASSETTE)
    repo.write(
        f"{layout.fixtures}/cassettes/mini-mmlu.recorded-for.json",
        dump_recorded_for(recorded_for(spec, package, requests=1)),
    )


@pytest.fixture(scope="module", params=[DEFAULT, EVALS], ids=["backend", "evals"])
def layout(request: pytest.FixtureRequest) -> Layout:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory, layout: Layout) -> GitRepo:
    """Scaffolded and committed; then the temperature change, the build script and ``--snapshot-update``."""
    repo = make_repo(tmp_path_factory.mktemp("team") / "repo")
    init_code = "import sys; from evaljig_fixtures import init_main; sys.exit(init_main(sys.argv[1:]))"
    init = _run(repo, sys.executable, "-c", init_code, *layout.init_args())
    assert init.returncode == 0, init.stderr
    repo.write(f"{layout.lev}/test_goldens.py", TEAM_GOLDEN_TEST)
    golden_args = ("-p", "no:cacheprovider", "-p", "no:randomly", f"{layout.lev}/test_goldens.py")
    first = _run(repo, sys.executable, "-m", "pytest", *golden_args, "--snapshot-update")
    assert first.returncode == 0, first.stdout
    _record(repo, layout)
    repo.commit("scaffold")
    script = repo.root / layout.script
    text = script.read_text(encoding="utf-8")
    assert '"temperature": 0.0' in text
    script.write_text(text.replace('"temperature": 0.0', '"temperature": 0.3'), encoding="utf-8")
    build = _run(repo, sys.executable, os.path.relpath(layout.script, layout.runs_from), cwd=layout.runs_from)
    assert "providers/fake-openai.json" in build.stdout, build.stdout + build.stderr
    update = _run(repo, sys.executable, "-m", "pytest", *golden_args, "--snapshot-update")
    assert update.returncode == 0, update.stdout
    return repo


def test_one_value_changed_entry_per_affected_golden_and_fixture_and_the_stale_recording(
    team: GitRepo, layout: Layout
) -> None:
    done = team.review("--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)

    entries = {e["path"]: e for e in data["entries"]}
    assert {p: (e["kind"], e["category"], e["changes"]) for p, e in entries.items()} == {
        f"{layout.fixtures}/providers/fake-openai.json": (
            "fixture", "value-changed", ["generation.temperature: 0.0 → 0.3"],
        ),
        f"{layout.fixtures}/configs/expected-config.yaml": (
            "fixture", "value-changed", ["model_parameters.generation_parameters.temperature: 0.0 → 0.3"],
        ),
        f"golden/{layout.lev}/test_goldens/test_generation.yaml": (
            "golden", "value-changed", ["temperature: 0.0 → 0.3"],
        ),
        f"golden/{layout.lev}/test_goldens/test_rendered_config.yaml": (
            "golden", "value-changed", ["model_parameters.generation_parameters.temperature: 0.0 → 0.3"],
        ),
    }  # fmt: skip
    assert entries[f"{layout.fixtures}/providers/fake-openai.json"]["group"] == "builder provider"
    assert entries[f"{layout.fixtures}/configs/expected-config.yaml"]["group"] == "builder config-golden"
    assert entries[f"golden/{layout.lev}/test_goldens/test_generation.yaml"]["group"] == f"{layout.lev}/test_goldens"
    [stale] = data["stale"]
    assert (stale["path"], stale["builder"]) == (f"{layout.fixtures}/cassettes/mini-mmlu.yaml", "cassette")
    assert stale["text"].startswith("1 recorded requests: generation_parameters.temperature 0.0 → 0.3; re-record: ")
    assert layout.script in stale["text"]


def test_every_view_says_it_from_any_folder_of_the_repository(team: GitRepo, layout: Layout) -> None:
    terminal = team.review()
    markdown = team.review("--markdown")
    page = team.root.parent / "review.html"
    assert team.review("--html", str(page), cwd=team.root / layout.runs_from).returncode == 0
    from_backend = team.review("--json", cwd=team.root / layout.runs_from)

    assert json.loads(from_backend.stdout) == json.loads(team.review("--json").stdout)
    html = page.read_text(encoding="utf-8")
    assert "Stale recordings (1)" in html
    assert html.count('<li class="entry" data-category="value-changed"') == 4

    assert "Stale recordings (1)" in terminal.stdout
    assert "generation.temperature: 0.0 → 0.3" in terminal.stdout
    assert markdown.stdout.startswith("<!-- evaljig-review -->\n## evaljig review\n")
    assert len(markdown.stdout) <= 65_000
    assert "### Stale recordings" in markdown.stdout
    assert markdown.stdout.index("### Stale recordings") < markdown.stdout.index("### Value changed (4)")


def test_the_evaljig_command_runs_it(team: GitRepo) -> None:
    cli = [sys.executable, "-c", "import sys; from evaljig import main; sys.exit(main())"]
    meta = Path(__file__).resolve().parents[2] / "evaljig" / "src"  # the meta-package is no workspace member
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(meta)}

    done = subprocess.run([*cli, "review", "--json"], cwd=team.root, capture_output=True, text=True, env=env)

    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["entries"]) == 4


def test_accept_keeps_the_goldens_and_reject_restores_the_fixtures(
    team: GitRepo, layout: Layout, tmp_path: Path
) -> None:
    """On a copy (the other tests share ``team``): accept the goldens, reject the fixtures' changes."""
    import shutil

    copy = GitRepo(tmp_path / "repo")
    shutil.copytree(team.root, copy.root, symlinks=True)
    provider = f"{layout.fixtures}/providers/fake-openai.json"
    changed = copy.read(provider)

    done = copy.review("--accept", "golden", "--reject", f"{layout.fixtures}/*")

    assert done.returncode == 0, done.stderr
    assert f"accepted golden/{layout.lev}/test_goldens/test_generation.yaml: staged (value-changed)" in done.stdout
    assert f"rejected {provider}: HEAD's version restored" in done.stdout
    assert copy.read(provider) != changed
    assert '"temperature": 0.0' in copy.read(provider)
    staged = copy.git("diff", "--cached", "--name-only").split()
    assert staged == [f"golden/{layout.lev}/test_goldens/test_generation.yaml",
                      f"golden/{layout.lev}/test_goldens/test_rendered_config.yaml"]  # fmt: skip
    after = json.loads(copy.review("--json").stdout)
    assert {e["path"] for e in after["entries"]} == set(staged)  # accepted stays listed until committed
    assert copy.git("status", "--porcelain", "--", layout.script).startswith(" M")  # never touched: not reviewed
