"""A cassette's diff per exchange; the Markdown comment's size cap and order; accept and reject."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from .gitrepo import GitRepo, make_repo


def exchange(content: str, answer: str, status: int = 200) -> dict[str, object]:
    body = {"messages": [{"role": "user", "content": content}], "model": "acme", "temperature": 0.0}
    return {
        "request": {
            "body": json.dumps(body, separators=(",", ":")),
            "headers": {"content-type": ["application/json"]},
            "method": "POST",
            "uri": "http://127.0.0.1:8000/v1/chat/completions",
        },
        "response": {
            "body": {"string": json.dumps({"choices": [{"message": {"role": "assistant", "content": answer}}]})},
            "headers": {"content-type": ["application/json"]},
            "status": {"code": status, "message": "OK"},
        },
    }


def cassette(*exchanges: dict[str, object]) -> str:
    return yaml.safe_dump({"interactions": list(exchanges), "version": 1}, sort_keys=True)


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return make_repo(tmp_path / "team")


def test_a_cassette_diff_is_per_exchange(repo: GitRepo) -> None:
    path = "tests/cassettes/acme.yaml"
    repo.write(path, cassette(exchange("2 + 2 = ?", "B"), exchange("Capital of France?", "Paris"), exchange("x", "y")))
    repo.write("tests/cassettes/acme.recorded-for.json", '{"format": "evaljig-recorded-for/1", "model": "acme"}\n')
    repo.commit()
    repo.write(
        path,
        cassette(exchange("2 + 2 = ?", "C"), exchange("New question", "N"), exchange("Capital of France?", "Paris")),
    )
    repo.write("tests/cassettes/acme.recorded-for.json", '{"format": "evaljig-recorded-for/1", "model": "acme-2"}\n')

    entries = {e["path"]: e for e in json.loads(repo.review("--json").stdout)["entries"]}

    recording = entries[path]
    assert (recording["kind"], recording["group"], recording["category"]) == ("cassette", path, "value-changed")
    assert recording["exchanges"] == [
        {
            "status": "answer-changed",
            "request": 'interactions[0] POST /v1/chat/completions [acme] "2 + 2 = ?"',
            "changes": ['interactions[0].response.body.choices[0].message.content: "B" → "C"'],
        },
        {"status": "new", "request": 'interactions[1] POST /v1/chat/completions [acme] "New question"', "changes": []},
        {"status": "removed", "request": 'interactions[2] (base) POST /v1/chat/completions [acme] "x"', "changes": []},
    ]
    assert recording["note"] == "1 new, 1 removed, 1 answers changed (3 exchanges, 3 in the base)"
    sidecar = entries["tests/cassettes/acme.recorded-for.json"]
    assert (sidecar["kind"], sidecar["group"], sidecar["changes"]) == ("cassette", path, ['model: "acme" → "acme-2"'])


def test_a_re_recorded_cassette_in_another_order_is_reordered(repo: GitRepo) -> None:
    path = "fixtures/cassettes/acme.yaml"
    repo.write(path, cassette(exchange("a", "1"), exchange("b", "2")))
    repo.commit()
    repo.write(path, cassette(exchange("b", "2"), exchange("a", "1")))

    [entry] = json.loads(repo.review("--json", "--fixtures", "fixtures").stdout)["entries"]

    assert (entry["kind"], entry["category"]) == ("cassette", "reordered")


def _many(repo: GitRepo, count: int) -> None:
    for i in range(count):
        repo.write(f"golden/t/test_m/test_{i:04}.yaml", f"value: {i}\nlong: {'x' * 60}\n")
        repo.write(f"golden/t/test_f/test_{i:04}.yaml", f"value: {i}\n")
    repo.commit()
    for i in range(count):
        repo.write(f"golden/t/test_m/test_{i:04}.yaml", f"value: {i + 1}\nlong: {'y' * 60}\n")
        repo.write(f"golden/t/test_f/test_{i:04}.yaml", f"value:   {i}\n")


def test_the_markdown_fits_one_comment_and_cuts_the_least_important_first(repo: GitRepo) -> None:
    _many(repo, 600)

    text = repo.review("--markdown").stdout

    assert len(text) <= 65_000
    assert text.splitlines()[0] == "<!-- evaljig-review -->"
    assert "1200 changed file(s) against `HEAD`: 600 value-changed, 600 format-only." in text
    assert "### Value changed (600)" in text
    assert "### Format only" not in text  # the least important are cut first
    shown = text.count("— golden `t/test_m`")
    assert 100 < shown < 600
    assert f"**{1200 - shown} more entries not shown**" in text


def test_a_small_markdown_review_has_every_section_in_order(repo: GitRepo) -> None:
    _many(repo, 3)
    repo.write("golden/t/test_m/test_new.yaml", "n: 1\n")

    text = repo.review("--markdown").stdout

    assert "more entries not shown" not in text
    assert text.index("### Value changed (3)") < text.index("### New (1)") < text.index("### Format only (3)")
    assert "  value: 1 → 2\n" in text


def test_reject_restores_and_accept_stages_only_reviewed_files(repo: GitRepo) -> None:
    repo.write("golden/t/test_a/test_value.yaml", "v: 1\n")
    repo.write("golden/t/test_a/test_format.yaml", "f: 1\n")
    repo.write("golden/t/test_a/test_removed.yaml", "r: 1\n")
    repo.write("golden/t/test_a/test_kept.yaml", "k: 1\n")
    repo.write("src/app.py", "print(1)\n")
    repo.commit()
    repo.write("golden/t/test_a/test_value.yaml", "v: 2\n")
    repo.write("golden/t/test_a/test_format.yaml", "f:   1\n")
    (repo.root / "golden/t/test_a/test_removed.yaml").unlink()
    repo.write("golden/t/test_a/test_new.yaml", "n: 1\n")
    repo.git("add", "golden/t/test_a/test_new.yaml")  # staged: reject unstages it too
    repo.write("golden/t/test_a/test_kept.yaml", "k: 2\n")
    repo.write("src/app.py", "print(2)\n")

    done = repo.review("--reject", "format-only", "--reject", "golden/t/test_a/test_[nr]*", "--accept", "*/test_kept*")

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "rejected golden/t/test_a/test_format.yaml: HEAD's version restored",
        "accepted golden/t/test_a/test_kept.yaml: staged (value-changed)",
        "rejected golden/t/test_a/test_new.yaml: new file deleted",
        "rejected golden/t/test_a/test_removed.yaml: HEAD's version restored",
    ]
    assert repo.read("golden/t/test_a/test_format.yaml") == "f: 1\n"
    assert repo.read("golden/t/test_a/test_removed.yaml") == "r: 1\n"
    assert not (repo.root / "golden/t/test_a/test_new.yaml").exists()
    assert repo.read("golden/t/test_a/test_value.yaml") == "v: 2\n"  # not selected: left as it is
    assert repo.read("src/app.py") == "print(2)\n"  # never a reviewed file
    assert repo.git("diff", "--cached", "--name-only").split() == ["golden/t/test_a/test_kept.yaml"]
    left = {e["path"]: e["category"] for e in json.loads(repo.review("--json").stdout)["entries"]}
    assert left == dict.fromkeys(["golden/t/test_a/test_kept.yaml", "golden/t/test_a/test_value.yaml"], "value-changed")


def test_reject_everything_never_reaches_other_files(repo: GitRepo) -> None:
    repo.write("golden/t/test_a/test_value.yaml", "v: 1\n")
    repo.write("notes.yaml", "n: 1\n")
    repo.commit()
    repo.write("golden/t/test_a/test_value.yaml", "v: 2\n")
    repo.write("notes.yaml", "n: 2\n")

    assert repo.review("--reject", "*").returncode == 0

    assert repo.read("golden/t/test_a/test_value.yaml") == "v: 1\n"
    assert repo.read("notes.yaml") == "n: 2\n"


def test_a_glob_matching_nothing_or_both_ways_is_refused(repo: GitRepo) -> None:
    repo.write("golden/t/test_a/test_value.yaml", "v: 1\n")
    repo.commit()
    repo.write("golden/t/test_a/test_value.yaml", "v: 2\n")

    nothing = repo.review("--reject", "src/*")
    both = repo.review("--reject", "golden", "--accept", "value-changed")

    assert (nothing.returncode, nothing.stderr) == (
        2,
        "evaljig-review: --reject src/*: matches no reviewed change (a path glob, category or kind)\n",
    )
    assert both.returncode == 2
    assert "golden/t/test_a/test_value.yaml: both accepted and rejected" in both.stderr
    assert repo.read("golden/t/test_a/test_value.yaml") == "v: 2\n"


def test_many_answers_changed_the_same_way_are_said_once(repo: GitRepo) -> None:
    path = "fixtures/cassettes/many.yaml"
    questions = [f"question {i}" for i in range(6)]
    repo.write(path, cassette(*(exchange(q, "A") for q in questions)))
    repo.commit()
    changed = [exchange(q, "A") for q in questions]
    for item in changed:  # a gateway change re-records every answer alike
        item["response"]["status"]["code"] = 201  # type: ignore[index]
    changed[5] = exchange(questions[5], "B")
    repo.write(path, cassette(*changed))

    [entry] = json.loads(repo.review("--json").stdout)["entries"]

    assert entry["exchanges"] == [
        {
            "status": "answers-changed",
            "request": "5 answers changed the same way (interactions[0], interactions[1], interactions[2],"
            " interactions[3], interactions[4])",
            "changes": ["interactions[*].response.status: 200 → 201"],
        },
        {
            "status": "answer-changed",
            "request": 'interactions[5] POST /v1/chat/completions [acme] "question 5"',
            "changes": ['interactions[5].response.body.choices[0].message.content: "A" → "B"'],
        },
    ]
    assert entry["note"] == "0 new, 0 removed, 6 answers changed (6 exchanges, 6 in the base)"
