"""A dataset package's manifest must follow its shipped JSON Schema *and* tell the truth about the package.

Every member's hash matches here (the manifest is recomputed over the edited members), so only
the one misstatement under test is wrong; each is refused in one line naming the zip, the
manifest field (or member) and the reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evaljig_fixtures import DatasetPackageError, load_dataset_package
from evaljig_fixtures._dataset_load import MANIFEST, canonical_json, member_entry
from evaljig_fixtures._dataset_write import deterministic_zip, package_members
from testkit.own_fixtures import dataset_source

Members = dict[str, bytes]


@pytest.fixture
def members() -> Members:
    return package_members(dataset_source("mini-mmlu"))


def package(tmp_path: Path, members: Members, edit: Callable[[dict[str, Any], Members], None]) -> Path:
    """The mini-mmlu package with ``edit`` applied to its manifest and members, hashes recomputed."""
    manifest = json.loads(members[MANIFEST])
    members = dict(members)
    edit(manifest, members)
    if "members" in manifest:
        manifest["members"] = {n: member_entry(d) for n, d in sorted(members.items()) if n != MANIFEST}
    members[MANIFEST] = canonical_json(manifest)
    path = tmp_path / "edited.eval752.zip"
    path.write_bytes(deterministic_zip(members))
    return path


def _set(field: str, value: Any) -> Callable[[dict[str, Any], Members], None]:
    return lambda manifest, members: manifest.__setitem__(field, value)


def _answer_key(change: Callable[[dict[str, str]], None]) -> Callable[[dict[str, Any], Members], None]:
    def edit(manifest: dict[str, Any], members: Members) -> None:
        key = json.loads(members["answer_key.json"])
        change(key)
        members["answer_key.json"] = canonical_json(key)

    return edit


def _flip_first_answer(key: dict[str, str]) -> None:
    first = next(iter(key))
    key[first] = "D" if key[first] != "D" else "C"


def _other_task(manifest: dict[str, Any], members: Members) -> None:
    members["mini_mmlu.py"] = members["mini_mmlu.py"].replace(b'name="mini_mmlu"', b'name="other_task"')


SCHEMA_CASES = {
    "traversal-name": (_set("name", "../../etc/evil"), "manifest.json: field 'name': '../../etc/evil' does not match"),
    "negative-rows": (_set("rows", -1), "manifest.json: field 'rows': -1 is less than the minimum of 1"),
    "unknown-field": (_set("evil", True), "manifest.json: top level: unknown field(s) evil (not in the manifest's"),
    "rows-as-text": (_set("rows", "42"), "manifest.json: field 'rows': '42' is not of type 'integer'"),
    "answer-key-extra": (
        _set("answer_key", {"correct": 1, "total": 2, "bonus": 3}),
        "manifest.json: field 'answer_key': unknown field(s) bonus",
    ),
}
CONTENT_CASES = {
    "rows-overstated": (_set("rows", 9999), "manifest.json: field 'rows': says 9999, test.jsonl holds 42"),
    "subjects": (_set("subjects", ["astronomy"]), "manifest.json: field 'subjects': must be the rows' subjects"),
    "answer-key-correct": (
        _answer_key(_flip_first_answer),
        "manifest.json: field 'answer_key.correct': says 29, answer_key.json answers ",
    ),
    "answer-key-total": (
        _set("answer_key", {"correct": 29, "total": 40}),
        "manifest.json: field 'answer_key.total': says 40, there are 42 rows",
    ),
    "answer-key-unknown-question": (
        _answer_key(lambda key: key.__setitem__("A question no row asks?", "A")),
        "answer_key.json: answers questions test.jsonl does not hold: 'A question no row asks?'",
    ),
    "task-module": (_other_task, "member 'mini_mmlu.py' (field 'task_module'): defines no task named 'mini_mmlu'"),
    "task-spec": (_set("task_spec", "other|0"), "manifest.json: field 'task_spec': 'other|0' does not name the task"),
}


@pytest.mark.parametrize("case", [*SCHEMA_CASES, *CONTENT_CASES])
def test_a_manifest_that_breaks_its_schema_or_misstates_the_package_is_one_line(
    tmp_path: Path, members: Members, case: str
) -> None:
    edit, expected = {**SCHEMA_CASES, **CONTENT_CASES}[case]
    path = package(tmp_path, members, edit)
    with pytest.raises(DatasetPackageError) as caught:
        load_dataset_package(path)
    message = str(caught.value)
    assert "\n" not in message, message
    assert message.startswith(f"{path}: {expected}"), message


def test_the_unedited_package_loads(tmp_path: Path, members: Members) -> None:
    loaded = load_dataset_package(package(tmp_path, members, lambda manifest, members: None))
    assert loaded.manifest["rows"] == len(loaded.rows) == 42
