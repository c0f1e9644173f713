"""What a reviewer reads, pinned as goldens (golden/review/test_output_goldens/): the terminal view and the comment.

One repository with a change of every kind and category; the outputs name only paths inside it,
so they are the same bytes on every machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaljig_review import Golden

from .gitrepo import GitRepo, make_repo

TABLE = (
    "|   Task    |Version|Metric|Value |   |Stderr|\n|-----------|-------|------|-----:|---|-----:|\n"
    "|all        |       |em    |{v}|±  |0.0722|\n"
)
CASSETTE = """interactions:
- request:
    body: '{{"messages":[{{"role":"user","content":"2 + 2 = ?"}}],"model":"acme"}}'
    method: POST
    uri: http://127.0.0.1:8000/v1/chat/completions
  response:
    body:
      string: '{{"choices":[{{"message":{{"content":"{answer}"}}}}]}}'
    status:
      code: 200
version: 1
"""


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    repo = make_repo(tmp_path_factory.mktemp("outputs") / "team")
    repo.write("golden/evals/tests/test_config/test_rendered.yaml", "model_parameters:\n  temperature: 0.0\n")
    repo.write("golden/evals/tests/test_config/test_format.yaml", "a: 1\n")
    repo.write("golden/evals/tests/test_config/test_order.yaml", "a: 1\nb: 2\n")
    repo.write("golden/evals/tests/test_config/test_gone.txt", "bye\n")
    repo.write("fixtures/providers/acme.json", json.dumps({"generation": {"temperature": 0.0}}, indent=2))
    repo.write("fixtures/configs/expected-cli-stdout.txt", TABLE.format(v="0.2500"))
    repo.write("fixtures/cassettes/acme.yaml", CASSETTE.format(answer="B"))
    repo.commit()
    repo.write("golden/evals/tests/test_config/test_rendered.yaml", "model_parameters:\n  temperature: 0.3\n")
    repo.write("golden/evals/tests/test_config/test_format.yaml", "a:    1\n")
    repo.write("golden/evals/tests/test_config/test_order.yaml", "b: 2\na: 1\n")
    (repo.root / "golden/evals/tests/test_config/test_gone.txt").unlink()
    repo.write("golden/evals/tests/test_config/test_new.txt", "hello\n")
    repo.write("fixtures/providers/acme.json", json.dumps({"generation": {"temperature": 0.3}}, indent=2))
    repo.write("fixtures/configs/expected-cli-stdout.txt", TABLE.format(v="0.5000"))
    repo.write("fixtures/cassettes/acme.yaml", CASSETTE.format(answer="C"))
    return repo


def test_the_terminal_view(repo: GitRepo, golden: Golden) -> None:
    done = repo.review("--fixtures", "fixtures")

    assert done.returncode == 0, done.stderr
    assert golden == done.stdout


def test_the_pull_request_comment(repo: GitRepo, golden: Golden) -> None:
    done = repo.review("--fixtures", "fixtures", "--markdown")

    assert done.returncode == 0, done.stderr
    assert golden == done.stdout


def test_the_json(repo: GitRepo, golden: Golden) -> None:
    done = repo.review("--fixtures", "fixtures", "--json")

    assert golden == json.loads(done.stdout)


def test_the_goldens_are_where_the_layout_says(repo: GitRepo) -> None:
    folder = Path(__file__).resolve().parents[3] / "golden" / "review" / "test_output_goldens"
    assert sorted(p.name for p in folder.iterdir()) == [
        "test_the_json.yaml",
        "test_the_pull_request_comment.txt",
        "test_the_terminal_view.txt",
    ]
