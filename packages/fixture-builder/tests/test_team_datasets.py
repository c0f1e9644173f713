"""A team's dataset package from its own rows: the format of evaljig's own, byte-stable, schema-described."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import jsonschema
import pytest

from evaljig_fixtures import (
    BuildError,
    DatasetSource,
    dataset_manifest_schema,
    dataset_package_bytes,
    load_dataset_package,
    read_rows_jsonl,
    write_dataset_package,
)

COMMITTED = Path(__file__).resolve().parents[3] / "fixtures" / "datasets"
ROWS = [
    {"question": "2 + 2 = ?", "choices": ["3", "4", "5", "22"], "answer": "B"},
    {"question": "Capital of Italy?", "choices": ["Rome", "Milan"], "answer": 0},
    {"question": "Ünïcödé stays as written: é (e + \u0301)?", "choices": ["yes", "no", "maybe"], "answer": "A"},
    {"question": "Largest ocean?", "choices": ["Atlantic", "Indian", "Pacific", "Arctic"], "answer": "C"},
]


def jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_rows_from_jsonl_or_code_give_the_same_bytes_and_a_loadable_package(tmp_path: Path) -> None:
    source = jsonl(tmp_path / "acme.jsonl", ROWS)
    from_file = write_dataset_package(
        tmp_path / "a" / "acme.zip", DatasetSource(source, name="acme-qa", description="ours")
    )
    from_code = dataset_package_bytes(DatasetSource(ROWS, name="acme-qa", description="ours"))

    assert from_file.read_bytes() == from_code  # deterministic: no clock, no path, no machine in the bytes
    package = load_dataset_package(from_file)
    assert (package.name, package.task, package.task_spec) == ("acme-qa", "acme_qa", "acme_qa|0")
    assert [r["id"] for r in package.rows] == [f"acme-qa-{n:04d}" for n in range(1, 5)]
    assert [r["answer"] for r in package.rows] == ["B", "A", "A", "C"]  # an index becomes its letter
    assert package.rows[2]["question"] == ROWS[2]["question"]  # code points exactly as given
    for row in package.rows:  # every answer-key letter is one of the row's own choices
        assert "ABCD".index(package.answer_key[row["question"]]) < len(row["choices"])
    assert package.manifest["answer_key"] == {"correct": 3, "total": 4}  # round(0.7 * 4)
    assert package.members["acme_qa.py"].decode().count("acme_qa") > 3  # the task module is named after the task


@pytest.mark.parametrize("zip_name", sorted(p.name for p in COMMITTED.glob("*.zip")))
def test_evaljig_own_manifests_follow_the_shipped_schema(zip_name: str) -> None:
    manifest = json.loads(zipfile.ZipFile(COMMITTED / zip_name).read("manifest.json"))
    jsonschema.Draft202012Validator(dataset_manifest_schema()).validate(manifest)


def test_a_team_manifest_follows_the_shipped_schema_and_a_bad_one_does_not() -> None:
    import io

    manifest = json.loads(
        zipfile.ZipFile(io.BytesIO(dataset_package_bytes(DatasetSource(ROWS, name="acme")))).read("manifest.json")
    )
    validator = jsonschema.Draft202012Validator(dataset_manifest_schema())
    validator.validate(manifest)
    assert list(validator.iter_errors({**manifest, "format": "other/2"}))
    assert list(validator.iter_errors({**manifest, "members": {"test.jsonl": {"sha256": "x", "size": 1}}}))


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"question": "Q?", "choices": ["a"], "answer": "A"}, "field 'choices': must be 2 to 4 non-empty strings"),
        ({"question": "Q?", "choices": ["a", "b"], "answer": "C"}, "field 'answer': must be one of A, B"),
        ({"question": "", "choices": ["a", "b"], "answer": "A"}, "field 'question': must be a non-empty string"),
        ({"question": "Q?", "choices": ["a", "b"], "answer": "A", "hint": 1}, "unknown field 'hint'"),
    ],
)
def test_a_bad_row_is_named_with_its_file_id_and_field(tmp_path: Path, row: dict[str, object], problem: str) -> None:
    source = jsonl(tmp_path / "bad.jsonl", [ROWS[0], row])
    with pytest.raises(BuildError) as caught:
        write_dataset_package(tmp_path / "bad.zip", DatasetSource(source, name="bad"))
    assert f"{source}: row bad-0002: {problem}" in str(caught.value)
    assert not (tmp_path / "bad.zip").exists()


def test_a_line_that_is_not_json_is_named_by_number(tmp_path: Path) -> None:
    source = tmp_path / "rows.jsonl"
    source.write_text(json.dumps(ROWS[0]) + "\n\n{not json\n", encoding="utf-8")
    with pytest.raises(BuildError, match=r"rows\.jsonl:3: not a JSON object"):
        read_rows_jsonl(source)


def test_one_dataset_source_is_the_only_argument_of_every_dataset_function(tmp_path: Path) -> None:
    """The rows and what the manifest says about them travel as one ``DatasetSource``, not a keyword list."""
    import inspect

    from evaljig_fixtures import BuildContext, dataset_package_builder

    assert list(inspect.signature(dataset_package_bytes).parameters) == ["source"]
    assert list(inspect.signature(write_dataset_package).parameters) == ["path", "source"]
    assert list(inspect.signature(dataset_package_builder).parameters) == ["relative", "source", "builder_name"]
    source = DatasetSource(ROWS, name="acme-qa", task="acme", description="ours", version=3, accuracy=0.5)
    builder = dataset_package_builder("datasets/acme.zip", source)
    [written] = builder.build(tmp_path, BuildContext(committed=tmp_path / "none", staging=tmp_path))
    assert written.read_bytes() == dataset_package_bytes(source)
    manifest = json.loads(zipfile.ZipFile(written).read("manifest.json"))
    assert (manifest["name"], manifest["task"], manifest["version"], manifest["description"]) == (
        "acme-qa", "acme", 3, "ours",
    )  # fmt: skip
    assert manifest["answer_key"] == {"correct": 2, "total": 4}  # round(0.5 * 4)
    assert builder.description == "ours"
