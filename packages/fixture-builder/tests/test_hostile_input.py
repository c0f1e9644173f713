"""Hostile input to the corpus and dataset-package loaders: their own error types, never a traceback or a hang.

Deep nesting, integers over 4,300 digits, overflowing floats, encrypted zip members, and
duplicates in bulk. Duplicate detection is shown linear by counting the comparisons it makes,
never by timing it; ``benchmarks/bench_loaders.py`` prints the times for 50,000 keys and 20,000 entries.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evaljig_fixtures import DatasetPackageError, FixtureError
from evaljig_fixtures.corpus import corpus_problems, load_capability_fixture_at
from evaljig_fixtures.datasets import load_dataset_package, load_dataset_source
from evaljig_fixtures.datasets.build import package_members
from evaljig_fixtures.datasets.deterministic_zip import deterministic_zip
from evaljig_fixtures.datasets.manifest import MANIFEST, canonical_json, member_entry
from evaljig_fixtures.strict_json import MAX_DEPTH, duplicates

DEEP = "[" * 100_000 + "]" * 100_000  # far past the interpreter's recursion limit
JUST_TOO_DEEP = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)  # parses in Python, refused by the rule
HUGE_INT = "9" * 5000


def baseline_with(payload_value: str) -> str:
    """The chat baseline envelope with raw JSON text as one payload value."""
    return (
        '{"schema_version": 1, "id": "chat.valid_baseline", "capability": "chat", "data_class": "synthetic",'
        ' "expected": "valid", "expected_error_pattern": null, "description": "A hostile baseline.",'
        f' "payload": {{"model": "m", "messages": {payload_value}}}}}'
    )


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (DEEP, f"nested deeper than {MAX_DEPTH} levels"),
        (JUST_TOO_DEEP, f"nested deeper than {MAX_DEPTH} levels"),
        (HUGE_INT, "integer with 5000 digits, more than the 4300 allowed"),
        (f"-{HUGE_INT}", "integer with 5000 digits, more than the 4300 allowed"),
        ("1e999", "number 1e999 overflows a float"),
    ],
    ids=["deep", "just-too-deep", "huge-int", "huge-negative-int", "float-overflow"],
)
def test_a_hostile_fixture_is_a_fixture_error(corpus_copy: Path, value: str, reason: str) -> None:
    (corpus_copy / "chat" / "valid_baseline.json").write_text(baseline_with(value), encoding="utf-8")
    with pytest.raises(FixtureError) as caught:
        load_capability_fixture_at(corpus_copy, "chat", "valid_baseline")
    assert caught.value.problems == (f"chat/valid_baseline.json: not valid JSON: {reason}",)
    # the whole-corpus check reads each file twice (once leniently for its id): neither read may escape
    assert f"chat/valid_baseline.json: not valid JSON: {reason}" in corpus_problems(corpus_copy)[1]


def test_duplicate_keys_are_named_once_each(corpus_copy: Path) -> None:
    keys = [f"k{i}" for i in range(5_000)] + ["k7", "k42"]
    payload = "{" + ", ".join(f'"{k}": 0' for k in keys) + "}"
    (corpus_copy / "chat" / "valid_baseline.json").write_text(baseline_with(payload), encoding="utf-8")
    with pytest.raises(FixtureError) as caught:
        load_capability_fixture_at(corpus_copy, "chat", "valid_baseline")
    assert caught.value.problems == ("chat/valid_baseline.json: not valid JSON: duplicate key(s) 'k42', 'k7'",)


def counting_str() -> tuple[type[str], Callable[[], int]]:
    """A ``str`` subclass counting its ``==`` calls, and a reader of the count (per test, no global)."""
    count = 0

    class Counted(str):
        __hash__ = str.__hash__

        def __eq__(self, other: object) -> bool:
            nonlocal count
            count += 1
            return str.__eq__(self, other)

    return Counted, lambda: count


@pytest.mark.parametrize("n", [1_000, 4_000])
def test_duplicate_detection_makes_a_linear_number_of_comparisons(n: int) -> None:
    counted, comparisons = counting_str()
    names = [counted(f"name-{i}") for i in range(n)] + [counted("name-3"), counted("name-5")]
    assert duplicates(names) == ["name-3", "name-5"]
    # a hash table compares only names that collide: the two repeats (pairwise checks would make ~n*n)
    assert comparisons() <= 2 + n // 100


@pytest.fixture
def members() -> dict[str, bytes]:
    return package_members(load_dataset_source("mini_mmlu.json"))


def with_manifest(members: dict[str, bytes]) -> dict[str, bytes]:
    """Recompute the manifest over the (edited) members, so only the edit itself is wrong."""
    manifest = json.loads(members[MANIFEST])
    manifest["members"] = {name: member_entry(data) for name, data in sorted(members.items()) if name != MANIFEST}
    return {**members, MANIFEST: canonical_json(manifest)}


@pytest.mark.parametrize(
    ("member", "text", "reason"),
    [
        ("answer_key.json", DEEP, f"answer_key.json: not valid UTF-8 JSON: nested deeper than {MAX_DEPTH} levels"),
        ("answer_key.json", f'{{"q": {HUGE_INT}}}', "answer_key.json: not valid UTF-8 JSON: integer with 5000 digits"),
        ("answer_key.json", '{"q": "A", "q": "B"}', "answer_key.json: not valid UTF-8 JSON: duplicate key(s) 'q'"),
        ("test.jsonl", DEEP, f"test.jsonl: line 1: not valid JSON: nested deeper than {MAX_DEPTH} levels"),
        ("test.jsonl", f'{{"id": {HUGE_INT}}}', "test.jsonl: line 1: not valid JSON: integer with 5000 digits"),
    ],
    ids=["key-deep", "key-huge-int", "key-duplicate", "rows-deep", "rows-huge-int"],
)
def test_hostile_package_json_is_a_package_error(
    tmp_path: Path, members: dict[str, bytes], member: str, text: str, reason: str
) -> None:
    members[member] = text.encode()
    path = tmp_path / "hostile.eval752.zip"
    path.write_bytes(deterministic_zip(with_manifest(members)))
    with pytest.raises(DatasetPackageError) as caught:
        load_dataset_package(path)
    assert len(caught.value.problems) == 1
    assert caught.value.problems[0].startswith(reason)


@pytest.mark.parametrize("text", [DEEP, '{"format": 1, "format": 2}', f'{{"size": {HUGE_INT}}}'])
def test_a_hostile_manifest_is_a_package_error(tmp_path: Path, members: dict[str, bytes], text: str) -> None:
    members[MANIFEST] = text.encode()
    path = tmp_path / "hostile.eval752.zip"
    path.write_bytes(deterministic_zip(members))
    with pytest.raises(DatasetPackageError, match=r"hostile\.eval752\.zip: manifest\.json: not valid UTF-8 JSON: "):
        load_dataset_package(path)


def encrypted(data: bytes, name: bytes) -> bytes:
    """Set the "encrypted" flag bit of member ``name`` in its local and central headers (zipfile cannot encrypt)."""
    raw = bytearray(data)
    for signature, flags_at, name_at in ((b"PK\x03\x04", 6, 30), (b"PK\x01\x02", 8, 46)):
        for start in _find_all(raw, signature):
            if raw[start + name_at : start + name_at + len(name)] == name:
                raw[start + flags_at] |= 0x01
    return bytes(raw)


def _find_all(data: bytearray, needle: bytes) -> Iterator[int]:
    start = data.find(needle)
    while start != -1:
        yield start
        start = data.find(needle, start + 1)


def test_an_encrypted_member_is_a_package_error(tmp_path: Path, members: dict[str, bytes]) -> None:
    path = tmp_path / "locked.eval752.zip"
    path.write_bytes(encrypted(deterministic_zip(members), b"answer_key.json"))
    with zipfile.ZipFile(path) as archive, pytest.raises(RuntimeError, match="password required"):
        archive.read("answer_key.json")  # what an unchecked loader would hit
    with pytest.raises(DatasetPackageError) as caught:
        load_dataset_package(path)
    assert caught.value.problems == ("member 'answer_key.json': encrypted (dataset packages are never encrypted)",)


def many_entries(path: Path, members: dict[str, bytes], n: int) -> Path:
    """A package plus ``n`` tiny extra entries, two of them written twice."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        for i in [*range(n), 3, 5]:
            archive.writestr(f"extra/{i}.txt", b"")
    return path


@pytest.mark.parametrize("n", [500, 2_000])
def test_the_zip_duplicate_check_compares_linearly(
    tmp_path: Path, members: dict[str, bytes], monkeypatch: pytest.MonkeyPatch, recwarn: pytest.WarningsRecorder, n: int
) -> None:
    """Through the real loader: member names become counting strings as zipfile lists them."""
    counted, comparisons = counting_str()
    path = many_entries(tmp_path / "crowded.eval752.zip", members, n)
    real_infolist = zipfile.ZipFile.infolist

    def infolist(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
        infos = real_infolist(archive)
        for info in infos:
            info.filename = counted(info.filename)
        return infos

    monkeypatch.setattr(zipfile.ZipFile, "infolist", infolist)
    with pytest.raises(DatasetPackageError) as caught:
        load_dataset_package(path)
    assert caught.value.problems == (
        "member 'extra/3.txt': appears more than once",
        "member 'extra/5.txt': appears more than once",
    )
    assert comparisons() <= 2 + n // 100
