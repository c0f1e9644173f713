"""A dataset package cannot take unbounded memory, and extracting one never writes through a planted symlink."""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest

from evaljig_fixtures import DatasetPackageError, _dataset_load, load_dataset_package
from evaljig_fixtures._dataset_write import deterministic_zip, package_members
from testkit.own_fixtures import dataset_source

MIB = 1024 * 1024
#: Zeros deflate about a thousandfold: 64 KiB of compressed data inflate to this.
INFLATED = 64 * MIB
_LOCAL, _CENTRAL = b"PK\x03\x04", b"PK\x01\x02"


def lying_zip(name: str, declared: int) -> bytes:
    """One deflated member of ``INFLATED`` zeros whose headers declare ``declared`` bytes (and their CRC).

    The CRC matches the first ``declared`` bytes, so only the size lies: a reader that inflates
    the whole stream before cutting it to size sees nothing wrong, after using ``INFLATED`` bytes.
    """
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    deflated = b"".join(packer.compress(bytes(MIB)) for _ in range(INFLATED // MIB)) + packer.flush()
    raw = bytearray(deterministic_zip({name: b"x"}))
    with zipfile.ZipFile(io.BytesIO(bytes(raw))) as archive:
        info = archive.infolist()[0]
    old_size = info.compress_size
    head = info.header_offset + 30 + len(name.encode())  # the local header has no extra field
    raw[head : head + old_size] = deflated
    crc = zlib.crc32(bytes(declared))
    for signature, crc_at in ((_LOCAL, 14), (_CENTRAL, 16)):
        at = raw.index(signature)
        struct.pack_into("<III", raw, at + crc_at, crc, len(deflated), declared)
    end = raw.index(b"PK\x05\x06")  # the central directory moved by the length difference
    struct.pack_into("<I", raw, end + 16, raw.index(_CENTRAL))
    return bytes(raw)


def peak_bytes(path: Path) -> tuple[int, BaseException | None]:
    tracemalloc.start()
    try:
        load_dataset_package(path)
        caught: BaseException | None = None
    except (DatasetPackageError, MemoryError) as exc:
        caught = exc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, caught


def test_the_lying_zip_helper_makes_what_it_says() -> None:
    """The helper's member declares 1,000 bytes and their CRC, and its stream inflates to ``INFLATED`` bytes."""
    data = lying_zip("test.jsonl", 1000)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        info = archive.infolist()[0]
    assert (info.file_size, info.CRC) == (1000, zlib.crc32(bytes(1000)))
    start = info.header_offset + 30 + len("test.jsonl")
    assert len(zlib.decompressobj(-15).decompress(data[start : start + info.compress_size])) == INFLATED


def test_a_member_declaring_far_fewer_bytes_than_it_holds_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "liar.eval752.zip"
    path.write_bytes(lying_zip("test.jsonl", 1000))
    peak, caught = peak_bytes(path)
    assert isinstance(caught, DatasetPackageError)
    assert "member 'test.jsonl': declares 1000 bytes but holds" in str(caught)
    assert "the declared size is a lie" in str(caught)
    assert peak < 4 * MIB


def test_a_member_that_inflates_past_its_declared_size_is_read_in_bounded_chunks(tmp_path: Path) -> None:
    """Declared size above the compressed size (so the header looks plausible): reading still stops at it."""
    declared = 2 * MIB  # the deflated zeros are about 64 KiB
    path = tmp_path / "inflates.eval752.zip"
    path.write_bytes(lying_zip("test.jsonl", declared))
    peak, caught = peak_bytes(path)
    assert peak < 16 * MIB  # the declared 2 MiB and a few read chunks, never the 64 MiB
    assert isinstance(caught, DatasetPackageError)  # the manifest is missing: the zip is refused, by name
    assert str(caught).startswith(f"{path}: ")


def test_a_zip_file_over_the_cap_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.eval752.zip"
    with path.open("wb") as handle:  # sparse: no disk used
        handle.truncate(_dataset_load.MAX_ZIP_BYTES + 1)
    peak, caught = peak_bytes(path)
    assert isinstance(caught, DatasetPackageError)
    assert f"huge.eval752.zip: {_dataset_load.MAX_ZIP_BYTES + 1} bytes, more than the" in str(caught)
    assert peak < 4 * MIB


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_device_is_refused_unread() -> None:
    with pytest.raises(DatasetPackageError, match=r"^/dev/zero: not a regular file$"):
        load_dataset_package(Path("/dev/zero"))


def test_a_fifo_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.eval752.zip"
    os.mkfifo(fifo)
    with pytest.raises(DatasetPackageError, match=r"pipe\.eval752\.zip: not a regular file"):
        load_dataset_package(fifo)


@pytest.fixture
def package_zip(tmp_path: Path) -> Path:
    members = package_members(dataset_source("mini-mmlu"))
    members["data/extra.txt"] = b"a member in a folder\n"
    manifest = json.loads(members["manifest.json"])
    manifest["members"]["data/extra.txt"] = {
        "sha256": hashlib.sha256(members["data/extra.txt"]).hexdigest(),
        "size": len(members["data/extra.txt"]),
    }
    members["manifest.json"] = json.dumps(manifest).encode()
    path = tmp_path / "mini-mmlu.eval752.zip"
    path.write_bytes(deterministic_zip(members))
    return path


def test_extract_writes_into_member_folders(tmp_path: Path, package_zip: Path) -> None:
    package = load_dataset_package(package_zip)
    package.extract_to(tmp_path / "out")
    assert (tmp_path / "out" / "data" / "extra.txt").read_bytes() == b"a member in a folder\n"
    package.extract_to(tmp_path / "out")  # again, over its own output
    assert not list((tmp_path / "out").rglob(".*.tmp"))


def test_extract_never_writes_through_a_planted_symlinked_folder(tmp_path: Path, package_zip: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    destination = tmp_path / "out"
    destination.mkdir()
    (destination / "data").symlink_to(outside, target_is_directory=True)
    package = load_dataset_package(package_zip)
    with pytest.raises(
        DatasetPackageError, match=r"member 'data/extra\.txt': cannot extract: .*data is a symbolic link"
    ):
        package.extract_to(destination)
    assert list(outside.iterdir()) == []


def test_extract_refuses_a_file_where_a_member_folder_goes(tmp_path: Path, package_zip: Path) -> None:
    destination = tmp_path / "out"
    destination.mkdir()
    (destination / "data").write_bytes(b"a file")
    with pytest.raises(DatasetPackageError, match=r"member 'data/extra\.txt': cannot extract: .*data is not a folder"):
        load_dataset_package(package_zip).extract_to(destination)


def test_extract_replaces_a_planted_symlink_file_instead_of_writing_through_it(
    tmp_path: Path, package_zip: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"keep me")
    destination = tmp_path / "out"
    destination.mkdir()
    (destination / "test.jsonl").symlink_to(victim)
    package = load_dataset_package(package_zip)
    package.extract_to(destination)
    assert victim.read_bytes() == b"keep me"
    assert not (destination / "test.jsonl").is_symlink()
    assert (destination / "test.jsonl").read_bytes() == package.members["test.jsonl"]


def test_the_destination_itself_may_be_a_symlink(tmp_path: Path, package_zip: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    module = load_dataset_package(package_zip).extract_to(tmp_path / "link")
    assert module == tmp_path / "link" / "mini_mmlu.py"
    assert (real / "data" / "extra.txt").is_file()
