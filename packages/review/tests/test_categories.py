"""Every category in a real git repository: new, removed, value-changed, format-only, reordered, bytes-changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .gitrepo import GitRepo, make_repo

CONFIG = "model_parameters:\n  model_name: openai/acme\n  temperature: 0.0\n  seed: 0\ntasks:\n- a\n- b\n"


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = make_repo(tmp_path / "team")
    repo.write("golden/evals/test_cfg/test_config.yaml", CONFIG)
    repo.write("golden/evals/test_cfg/test_format.yaml", CONFIG)
    repo.write("golden/evals/test_cfg/test_order.yaml", CONFIG)
    repo.write("golden/evals/test_cfg/test_gone.txt", "bye\n")
    repo.write("golden/evals/test_cfg/test_banner.txt", "one\ntwo\n")
    repo.write("fixtures/providers/acme.json", json.dumps({"generation": {"temperature": 0.0, "seed": 0}}))
    repo.write("fixtures/datasets/rows.zip", b"PK\x03\x04\x00\xff binary")
    repo.write("src/app.py", "print('app')\n")
    repo.commit()
    return repo


def _data(repo: GitRepo, *args: str) -> dict[str, dict[str, object]]:
    done = repo.review("--json", "--fixtures", "fixtures", *args)
    assert done.returncode == 0, done.stderr
    return {e["path"]: e for e in json.loads(done.stdout)["entries"]}


def test_each_change_gets_its_category_and_key_paths(repo: GitRepo) -> None:
    repo.write("golden/evals/test_cfg/test_config.yaml", CONFIG.replace("temperature: 0.0", "temperature: 0.3"))
    repo.write("golden/evals/test_cfg/test_format.yaml", CONFIG.replace("openai/acme", "'openai/acme'") + "\n\n")
    repo.write(
        "golden/evals/test_cfg/test_order.yaml",
        "tasks:\n- b\n- a\nmodel_parameters:\n  seed: 0\n  temperature: 0.0\n  model_name: openai/acme\n",
    )
    (repo.root / "golden/evals/test_cfg/test_gone.txt").unlink()
    repo.write("golden/evals/test_cfg/test_new.yaml", "x: 1\n")
    repo.write("golden/evals/test_cfg/test_banner.txt", "one  \r\ntwo\r\n")
    repo.write("fixtures/providers/acme.json", '{\n  "generation": {"temperature": 0.3, "seed": 0}\n}\n')
    repo.write("fixtures/datasets/rows.zip", b"PK\x03\x04\x00\xfe binary!")
    repo.write("src/app.py", "print('changed')\n")  # not a golden, fixture or cassette: never listed

    entries = _data(repo)

    assert {p: e["category"] for p, e in entries.items()} == {
        "golden/evals/test_cfg/test_config.yaml": "value-changed",
        "golden/evals/test_cfg/test_format.yaml": "format-only",
        "golden/evals/test_cfg/test_order.yaml": "reordered",
        "golden/evals/test_cfg/test_gone.txt": "removed",
        "golden/evals/test_cfg/test_new.yaml": "new",
        "golden/evals/test_cfg/test_banner.txt": "format-only",
        "fixtures/providers/acme.json": "value-changed",
        "fixtures/datasets/rows.zip": "bytes-changed",
    }
    assert entries["golden/evals/test_cfg/test_config.yaml"]["changes"] == ["model_parameters.temperature: 0.0 → 0.3"]
    assert entries["fixtures/providers/acme.json"]["changes"] == ["generation.temperature: 0.0 → 0.3"]
    golden = entries["golden/evals/test_cfg/test_config.yaml"]
    assert (golden["kind"], golden["group"], golden["item"]) == ("golden", "evals/test_cfg", "test_config")
    assert (entries["fixtures/providers/acme.json"]["kind"], entries["fixtures/providers/acme.json"]["group"]) == (
        "fixture",
        "providers",
    )
    assert entries["fixtures/datasets/rows.zip"]["note"] == "not parsed as .zip: 13 → 14 bytes"


def test_lists_keys_and_lines_by_path(repo: GitRepo) -> None:
    repo.write(
        "golden/evals/test_cfg/test_config.yaml",
        "model_parameters:\n  model_name: openai/acme\n  temperature: 0.0\n  top_p: 0.9\ntasks:\n- a\n- c\n- b\n",
    )
    repo.write("golden/evals/test_cfg/test_banner.txt", "one\nTWO\nthree\n")

    entries = _data(repo)

    assert entries["golden/evals/test_cfg/test_config.yaml"]["changes"] == [
        "model_parameters.seed: 0 → (absent)",
        "model_parameters.top_p: (absent) → 0.9",
        'tasks[1]: (absent) → "c"',
    ]
    assert entries["golden/evals/test_cfg/test_banner.txt"]["changes"] == [
        'line 2: "two" → (absent)',
        'line 2: (absent) → "TWO"',
        'line 3: (absent) → "three"',
    ]


def test_a_score_table_shows_the_score_delta(repo: GitRepo) -> None:
    table = (
        "|   Task    |Version|Metric|Value |   |Stderr|\n|-----------|-------|------|-----:|---|-----:|\n"
        "|all        |       |em    |{all}|±  |0.0722|\n|mini_mmlu:0|       |em    |{mini}|±  |0.0722|\n"
    )
    repo.write("fixtures/configs/expected-cli-stdout.txt", table.format(all="0.2500", mini="0.2500"))
    repo.commit("table")
    repo.write("fixtures/configs/expected-cli-stdout.txt", table.format(all="0.5000", mini="0.2500"))

    entry = _data(repo)["fixtures/configs/expected-cli-stdout.txt"]

    assert entry["category"] == "value-changed"
    assert entry["changes"] == ["all|em: 0.2500 → 0.5000 (+0.2500)"]
    assert entry["note"] == "scores"


def test_a_baseline_anywhere_is_reviewed_with_deltas(repo: GitRepo) -> None:
    base = {"kind": "evaljig-baseline", "cases": {"q1": {"em": {"result": "pass", "score": 0.5, "runs": 3}}}}
    repo.write("reports/evaljig-baseline.json", json.dumps(base, indent=2))
    repo.write("reports/other.json", json.dumps({"kind": "something-else"}))
    repo.commit("baseline")
    base["cases"]["q1"]["em"]["score"] = 0.75  # type: ignore[index]
    repo.write("reports/evaljig-baseline.json", json.dumps(base, indent=2))
    repo.write("reports/other.json", json.dumps({"kind": "something-else", "x": 1}))

    entries = _data(repo)

    assert list(entries) == ["reports/evaljig-baseline.json"]
    assert entries["reports/evaljig-baseline.json"]["kind"] == "baseline"
    assert entries["reports/evaljig-baseline.json"]["changes"] == ["cases.q1.em.score: 0.5 → 0.75 (+0.25)"]


def test_syrupy_amber_snapshots_are_goldens_too(repo: GitRepo) -> None:
    amber = "# serializer version: 1\n# name: test_a\n  'x'\n# ---\n# name: test_b\n  'y'\n# ---\n"
    repo.write("evals/tests/__snapshots__/test_m.ambr", amber)
    repo.commit("amber")
    repo.write("evals/tests/__snapshots__/test_m.ambr", amber.replace("'y'", "'z'"))

    entry = _data(repo)["evals/tests/__snapshots__/test_m.ambr"]

    assert (entry["kind"], entry["group"], entry["category"]) == ("golden", "evals/tests/test_m", "value-changed")
    assert entry["changes"] == ["test_b line 1: \"  'y'\" → \"  'z'\""]


def test_base_ref_and_untracked_and_staged_changes(repo: GitRepo) -> None:
    repo.write("golden/evals/test_cfg/test_config.yaml", CONFIG.replace("seed: 0", "seed: 1"))
    repo.commit("seed")
    repo.write("golden/evals/test_cfg/test_staged.yaml", "s: 1\n")
    repo.git("add", "golden/evals/test_cfg/test_staged.yaml")
    repo.write("golden/evals/test_cfg/test_untracked.yaml", "u: 1\n")

    against_head = _data(repo)
    against_first = _data(repo, "--base", "HEAD~1")

    assert sorted(against_head) == [
        "golden/evals/test_cfg/test_staged.yaml",
        "golden/evals/test_cfg/test_untracked.yaml",
    ]
    assert against_first["golden/evals/test_cfg/test_config.yaml"]["changes"] == ["model_parameters.seed: 0 → 1"]


def test_json_is_stable_and_the_terminal_view_groups(repo: GitRepo) -> None:
    repo.write("golden/evals/test_cfg/test_config.yaml", CONFIG.replace("temperature: 0.0", "temperature: 0.3"))
    repo.write("golden/evals/test_cfg/test_new.yaml", "x: 1\n")

    first, second = repo.review("--json"), repo.review("--json")
    terminal = repo.review()

    assert first.stdout == second.stdout
    assert [e["path"] for e in json.loads(first.stdout)["entries"]] == sorted(
        e["path"] for e in json.loads(first.stdout)["entries"]
    )
    assert terminal.returncode == 0
    lines = terminal.stdout.splitlines()
    assert lines[0] == "evaljig review against HEAD: 1 value-changed, 1 new"
    assert "Goldens" in lines
    at = lines.index("  evals/test_cfg")
    assert lines[at + 1].split() == ["value-changed", "golden/evals/test_cfg/test_config.yaml"]
    assert lines[at + 2].strip() == "model_parameters.temperature: 0.0 → 0.3"


def test_exit_codes(repo: GitRepo, tmp_path: Path) -> None:
    assert repo.review("--fail-on-change").returncode == 0  # nothing changed
    repo.write("golden/evals/test_cfg/test_new.yaml", "x: 1\n")
    assert repo.review().returncode == 0
    assert repo.review("--fail-on-change").returncode == 1

    unknown = repo.review("--base", "no-such-ref")
    assert unknown.returncode == 2
    assert unknown.stderr == f"evaljig-review: --base no-such-ref: not a commit in {repo.root}\n"

    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    unwritable = repo.review("--html", str(tmp_path / "a-file" / "review.html"))  # a path under a file
    assert unwritable.returncode == 2
    assert unwritable.stderr.startswith("evaljig-review: ")
    assert unwritable.stderr.count("\n") == 1
    assert "a-file" in unwritable.stderr

    outside = tmp_path / "plain"
    outside.mkdir()
    done = repo.review(cwd=outside)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "not inside a git repository" in done.stderr


def test_a_bad_review_table_is_one_line(repo: GitRepo) -> None:
    repo.write("pyproject.toml", "[tool.evaljig.review]\ngolden = 3\n")

    done = repo.review()

    assert done.returncode == 2
    assert done.stderr == (
        f"evaljig-review: {repo.root / 'pyproject.toml'}: [tool.evaljig.review] golden: must be a list of folder paths"
        " (strings), relative to the repository\n"
    )


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("bomb.yaml", b"a: &a [1, 2]\nb: &b [*a, *a, *a]\nc: &c [*b, *b, *b]\n"),
        ("deep.yaml", b"x: " + b"[" * 3000 + b"]" * 3000 + b"\n"),
        ("deep.json", b"[" * 3000 + b"]" * 3000),
        ("dup.json", b'{"a": 1, "a": 2}'),
        ("dup.yaml", b"x: 0\nx: 1\n"),  # a merge that kept both lines: which one a loader keeps is no answer
        ("binary.yaml", b"\x00\x01\x02\xff"),
        ("latin1.txt", "caf\xe9\n".encode("latin-1")),
    ],
)
def test_hostile_or_unparseable_files_fall_back_to_bytes(repo: GitRepo, name: str, data: bytes) -> None:
    repo.write(
        f"golden/evals/test_h/{name}", b"x: 1\n" if name.endswith(".yaml") else b"{}" if ".json" in name else b"x\n"
    )
    repo.commit("hostile")
    repo.write(f"golden/evals/test_h/{name}", data)

    entry = _data(repo)[f"golden/evals/test_h/{name}"]

    assert entry["category"] == "bytes-changed"
    assert entry["note"].startswith(f"not parsed as {name[name.index('.') :]}: ")


def test_a_golden_folder_beside_a_nested_rootdir_is_found(repo: GitRepo) -> None:
    """A team running pytest from ``backend/`` has its goldens in ``backend/golden/``."""
    repo.write("backend/golden/tests/test_api/test_reply.yaml", "status: 200\n")
    repo.commit("nested")
    repo.write("backend/golden/tests/test_api/test_reply.yaml", "status: 201\n")

    entry = _data(repo)["backend/golden/tests/test_api/test_reply.yaml"]

    assert (entry["kind"], entry["group"], entry["item"]) == ("golden", "tests/test_api", "test_reply")
    assert entry["changes"] == ["status: 200 → 201"]
    assert _data(repo, "--golden", "golden") == {}  # told where goldens are, it looks nowhere else


def _zip(members: dict[str, str], year: int = 2020) -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in members.items():
            archive.writestr(zipfile.ZipInfo(name, (year, 1, 1, 0, 0, 0)), text)
    return buffer.getvalue()


def test_a_dataset_package_is_compared_by_member_and_row(repo: GitRepo) -> None:
    rows = '{"question": "2 + 2 = ?", "answer": "B"}\n{"question": "3 + 3 = ?", "answer": "C"}\n'
    repo.write("fixtures/datasets/math.zip", _zip({"test.jsonl": rows, "task.py": "x = 1\n"}))
    repo.write("fixtures/datasets/same.zip", _zip({"test.jsonl": rows}))
    repo.commit("datasets")
    changed = rows.replace('"answer": "C"', '"answer": "D"')
    repo.write("fixtures/datasets/math.zip", _zip({"test.jsonl": changed, "task.py": "x = 2\n", "README.md": "r"}))
    repo.write("fixtures/datasets/same.zip", _zip({"test.jsonl": rows}, year=2021))  # other timestamps only

    entries = _data(repo)

    math = entries["fixtures/datasets/math.zip"]
    assert math["category"] == "value-changed"
    assert math["changes"] == [
        'test.jsonl[1].answer: "C" → "D"',
        'task.py line 1: "x = 1" → "x = 2"',
        "README.md: (absent) → 1 bytes",
    ]
    assert math["note"] == "3 members, 2 in the base"
    same = entries["fixtures/datasets/same.zip"]
    assert (same["category"], same["note"]) == ("format-only", "the same members, other zip bytes")


def test_without_the_fixture_builder_the_scripts_are_a_note(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """evaljig-review alone (no evaljig-fixtures): the review still runs, and says what it could not check."""
    from evaljig_review import _review
    from evaljig_review._config import load_config
    from evaljig_review._git import Repo

    repo.write(
        "scripts/build.py",
        "from evaljig_fixtures import regen_main\nif __name__ == '__main__':\n    regen_main([], fixtures='f')\n",
    )
    repo.commit("script")
    repo.write("golden/evals/test_cfg/test_new.yaml", "x: 1\n")
    monkeypatch.setattr(_review, "fixture_builder_installed", lambda: False)

    review = _review.build_review(Repo(repo.root), load_config(repo.root, [], []))

    assert [e.path for e in review.entries] == ["golden/evals/test_cfg/test_new.yaml"]
    assert review.notes == [
        "build scripts not read (scripts/build.py): evaljig-fixtures is not installed here, so no builder groups"
        " and no stale-recording check (pip install evaljig-fixtures)"
    ]
