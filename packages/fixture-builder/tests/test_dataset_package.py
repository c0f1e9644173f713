"""``load_dataset_package`` trusts nothing: corrupt zips, hash mismatches, strays and traversal are named."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from evaljig_fixtures import DatasetPackageError, EvaljigFixturesError, load_dataset_package
from evaljig_fixtures._dataset_write import deterministic_zip, package_members
from testkit.own_fixtures import dataset_source


@pytest.fixture
def members() -> dict[str, bytes]:
    return package_members(dataset_source("mini-mmlu"))


def write(tmp_path: Path, members: dict[str, bytes]) -> Path:
    path = tmp_path / "mini-mmlu.eval752.zip"
    path.write_bytes(deterministic_zip(members))
    return path


def test_a_valid_package_loads_and_extracts(tmp_path: Path, members: dict[str, bytes]) -> None:
    package = load_dataset_package(write(tmp_path, members))
    assert package.name == "mini-mmlu"
    assert package.task == "mini_mmlu"
    assert package.task_spec == "mini_mmlu|0"
    assert len(package.rows) == package.manifest["rows"] >= 40
    assert len(package.answer_key) == len(package.rows)
    module = package.extract_to(tmp_path / "run" / "data")
    assert module == tmp_path / "run" / "data" / "mini_mmlu.py"
    assert sorted(p.name for p in module.parent.iterdir()) == sorted(members)
    for name, data in members.items():
        assert (module.parent / name).read_bytes() == data
    assert not list(module.parent.glob(".*.tmp"))


@pytest.mark.parametrize("data", [b"", b"not a zip at all", b"PK\x03\x04truncated"])
def test_a_corrupt_zip_is_named(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "broken.eval752.zip"
    path.write_bytes(data)
    with pytest.raises(DatasetPackageError, match=r"broken\.eval752\.zip: not a valid zip archive") as caught:
        load_dataset_package(path)
    assert isinstance(caught.value, EvaljigFixturesError)


def test_a_truncated_member_is_named(tmp_path: Path, members: dict[str, bytes]) -> None:
    raw = bytearray(write(tmp_path, members).read_bytes())
    start = raw.index(b"test.jsonl") + len(b"test.jsonl") + 20  # inside the deflated data of test.jsonl
    raw[start : start + 8] = b"\xff" * 8
    path = tmp_path / "flipped.eval752.zip"
    path.write_bytes(bytes(raw))
    with pytest.raises(DatasetPackageError, match=r"flipped\.eval752\.zip: member 'test\.jsonl': cannot be read"):
        load_dataset_package(path)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(DatasetPackageError, match=r"nope\.zip: cannot read: No such file"):
        load_dataset_package(tmp_path / "nope.zip")


def test_a_hash_mismatch_names_the_member_and_both_hashes(tmp_path: Path, members: dict[str, bytes]) -> None:
    manifest = json.loads(members["manifest.json"])
    expected = manifest["members"]["answer_key.json"]["sha256"]
    members["answer_key.json"] = members["answer_key.json"].replace(b'": "A"', b'": "B"', 1)
    with pytest.raises(DatasetPackageError) as caught:
        load_dataset_package(write(tmp_path, members))
    message = str(caught.value)
    assert "member 'answer_key.json': sha256 mismatch: manifest says " + expected in message
    assert "member is " in message
    assert "size mismatch" not in message


def test_a_size_mismatch_is_named(tmp_path: Path, members: dict[str, bytes]) -> None:
    members["test.jsonl"] += b"\n"
    with pytest.raises(DatasetPackageError, match=r"member 'test\.jsonl': size mismatch: manifest says \d+, member"):
        load_dataset_package(write(tmp_path, members))


def test_unexpected_and_missing_members(tmp_path: Path, members: dict[str, bytes]) -> None:
    members["notes.txt"] = b"smuggled"
    del members["mini_mmlu.py"]
    with pytest.raises(DatasetPackageError) as caught:
        load_dataset_package(write(tmp_path, members))
    assert caught.value.problems == (
        "member 'notes.txt': not listed in manifest.json",
        "member 'mini_mmlu.py': listed in manifest.json but missing",
    )


def test_missing_or_broken_manifest(tmp_path: Path, members: dict[str, bytes]) -> None:
    manifest = members.pop("manifest.json")
    with pytest.raises(DatasetPackageError, match=r"manifest\.json is missing"):
        load_dataset_package(write(tmp_path, members))
    members["manifest.json"] = manifest[:-10]
    with pytest.raises(DatasetPackageError, match=r"manifest\.json: not valid UTF-8 JSON"):
        load_dataset_package(write(tmp_path, members))
    members["manifest.json"] = json.dumps({"format": "other", "members": {}}).encode()
    with pytest.raises(DatasetPackageError) as caught:
        load_dataset_package(write(tmp_path, members))
    assert "manifest.json: field 'format': must be 'evaljig-dataset-package/1', got 'other'" in caught.value.problems


@pytest.mark.parametrize(
    "name", ["../evil.py", "/etc/evil", "a/../../evil", "C:/evil", "a\\evil", "./test.jsonl", "a//b"]
)
def test_path_traversal_is_refused(tmp_path: Path, members: dict[str, bytes], name: str) -> None:
    path = tmp_path / "traversal.eval752.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
        archive.writestr(zipfile.ZipInfo(name), b"print('owned')")
    with pytest.raises(DatasetPackageError, match=r"traversal\.eval752\.zip: member .*: unsafe name"):
        load_dataset_package(path)
    assert not (tmp_path.parent / "evil.py").exists()


def test_symlinks_and_folders_are_refused(tmp_path: Path, members: dict[str, bytes]) -> None:
    path = tmp_path / "links.eval752.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
        link = zipfile.ZipInfo("link")
        link.external_attr = (0o120777) << 16
        archive.writestr(link, "/etc/passwd")
    with pytest.raises(DatasetPackageError, match="member 'link': not a regular file"):
        load_dataset_package(path)
