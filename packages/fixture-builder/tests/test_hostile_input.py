"""Hostile input to the dataset-package loader: a ``DatasetPackageError``, never a traceback or a hang.

Deep nesting, integers over 4,300 digits, duplicate keys, encrypted zip members, and
duplicate entries in bulk. Duplicate detection is shown linear by counting the comparisons it
makes, never by timing it; ``benchmarks/bench_package_loader.py`` prints the time for 20,000 entries.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaljig_corpus.strict_json import MAX_DEPTH
from evaljig_fixtures import DatasetPackageError, load_dataset_package
from evaljig_fixtures._dataset_load import MANIFEST, canonical_json, member_entry
from evaljig_fixtures._dataset_write import deterministic_zip, package_members
from testkit.counting import counting_str
from testkit.own_fixtures import dataset_source

DEEP = "[" * 100_000 + "]" * 100_000  # far past the interpreter's recursion limit
HUGE_INT = "9" * 5000


@pytest.fixture
def members() -> dict[str, bytes]:
    return package_members(dataset_source("mini-mmlu"))


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
        ("answer_key.json", '{"q": "A", "q": "B"}', "answer_key.json: not valid UTF-8 JSON: duplicate key 'q'"),
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
