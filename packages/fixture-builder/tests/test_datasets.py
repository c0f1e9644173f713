"""Dataset packages: byte-for-byte rebuilds, zip properties, the data, the answer key and the task module."""

from __future__ import annotations

import hashlib
import io
import json
import sys
import types
import unicodedata
import zipfile
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from evaljig_fixtures import load_dataset_package
from evaljig_fixtures._dataset_write import FIXED_DATE_TIME, dataset_package_bytes, package_members
from evaljig_fixtures._regen_builder import BuildContext
from testkit.own_fixtures import build_script, dataset_source

SOURCES = {"mini-mmlu": "mini-mmlu", "polyglot": "polyglot"}
DATASET_BUILDERS = [b for b in build_script().BUILDERS if b.name in SOURCES]


def build_into(tmp: Path) -> dict[str, bytes]:
    ctx = BuildContext(committed=tmp / "none", staging=tmp)
    paths = [p for builder in DATASET_BUILDERS for p in builder.build(tmp, ctx)]
    return {p.relative_to(tmp).as_posix(): p.read_bytes() for p in paths}


def test_two_builds_give_identical_bytes(tmp_path: Path) -> None:
    first, second = build_into(tmp_path / "a"), build_into(tmp_path / "b")
    assert sorted(first) == ["datasets/mini-mmlu.eval752.zip", "datasets/polyglot.eval752.zip"]
    assert first == second


@pytest.mark.parametrize("source", SOURCES.values())
def test_zip_entries_are_sorted_dated_1980_and_0644(source: str) -> None:
    data = dataset_package_bytes(dataset_source(source))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        assert archive.comment == b""
    names = [i.filename for i in infos]
    assert names == sorted(names)
    for info in infos:
        assert info.date_time == FIXED_DATE_TIME
        assert info.external_attr >> 16 == 0o100644
        assert info.create_system == 3
        assert info.compress_type == zipfile.ZIP_DEFLATED
        assert info.extra == b""
        assert info.comment == b""


def test_mini_mmlu_has_40_rows_over_5_subjects_in_the_row_shape() -> None:
    package_members_ = package_members(dataset_source("mini-mmlu"))
    rows = [json.loads(line) for line in package_members_["test.jsonl"].decode().splitlines()]
    assert len(rows) >= 40
    assert len({r["subject"] for r in rows}) >= 5
    for row in rows:
        assert list(row) == ["id", "subject", "question", "choices", "answer"]
        assert len(row["choices"]) == 4
        assert row["answer"] in "ABCD"
    assert len({r["id"] for r in rows}) == len({r["question"] for r in rows}) == len(rows)


@pytest.mark.parametrize("source", SOURCES.values())
def test_answer_key_is_right_for_about_70_percent(source: str) -> None:
    members = package_members(dataset_source(source))
    rows = [json.loads(line) for line in members["test.jsonl"].decode().splitlines()]
    key = json.loads(members["answer_key.json"])
    assert list(key) == [r["question"] for r in rows]
    accuracy = sum(key[r["question"]] == r["answer"] for r in rows) / len(rows)
    assert 0 < accuracy < 1
    assert accuracy == pytest.approx(0.7, abs=0.5 / len(rows) + 1e-9)
    assert set(key.values()) <= {"A", "B", "C", "D"}
    manifest = json.loads(members["manifest.json"])
    assert manifest["answer_key"] == {"correct": round(accuracy * len(rows)), "total": len(rows)}


@pytest.mark.parametrize("source", SOURCES.values())
def test_manifest_lists_sha256_and_size_of_every_other_member(source: str) -> None:
    members = package_members(dataset_source(source))
    manifest = json.loads(members["manifest.json"])
    task = manifest["task"]
    assert sorted(members) == sorted(["answer_key.json", "manifest.json", "test.jsonl", f"{task}.py"])
    assert manifest["members"] == {
        name: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
        for name, data in sorted(members.items())
        if name != "manifest.json"
    }
    assert manifest["task_spec"] == f"{task}|0"
    assert manifest["rows"] == len(members["test.jsonl"].splitlines())
    assert members["manifest.json"].endswith(b"}\n")


@pytest.fixture
def fake_lighteval(monkeypatch: pytest.MonkeyPatch) -> None:
    """Just enough of lighteval's names for the task module to import (the real one runs in nox -s lighteval)."""

    class Doc:
        def __init__(self, **kwargs: Any) -> None:
            self.__dict__.update(kwargs)

    class LightevalTaskConfig(Doc):
        pass

    modules = {
        "lighteval": types.ModuleType("lighteval"),
        "lighteval.metrics": types.ModuleType("lighteval.metrics"),
        "lighteval.metrics.metrics": types.ModuleType("lighteval.metrics.metrics"),
        "lighteval.tasks": types.ModuleType("lighteval.tasks"),
        "lighteval.tasks.lighteval_task": types.ModuleType("lighteval.tasks.lighteval_task"),
        "lighteval.tasks.requests": types.ModuleType("lighteval.tasks.requests"),
    }
    modules["lighteval.metrics.metrics"].Metrics = types.SimpleNamespace(exact_match="exact_match")  # type: ignore[attr-defined]
    modules["lighteval.tasks.lighteval_task"].LightevalTaskConfig = LightevalTaskConfig  # type: ignore[attr-defined]
    modules["lighteval.tasks.requests"].Doc = Doc  # type: ignore[attr-defined]
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)


@pytest.mark.usefixtures("fake_lighteval")
@pytest.mark.parametrize("source", SOURCES.values())
def test_task_module_prompts_and_the_gateway_answer_key_agree(source: str, tmp_path: Path) -> None:
    """Each prompt the task module renders gets exactly its own answer from the gateway's answer key."""
    from evaljig_gateway import AnswerKey

    zip_path = tmp_path / "package.zip"
    zip_path.write_bytes(dataset_package_bytes(dataset_source(source)))
    package = load_dataset_package(zip_path)
    module_path = package.extract_to(tmp_path / "data")
    namespace: dict[str, Any] = {"__file__": str(module_path), "__name__": "task_module"}
    exec(compile(module_path.read_text(encoding="utf-8"), str(module_path), "exec"), namespace)
    config = namespace["TASKS_TABLE"][0]
    assert config.name == package.task
    assert config.hf_repo == str(module_path.parent.resolve())
    assert config.evaluation_splits == ["test"]
    assert config.generation_size == 8
    gateway_key = AnswerKey(package.answer_key)
    for row in package.rows:
        doc = config.prompt_function(row, task_name=f"{package.task}|0")
        assert row["question"] in doc.query
        assert doc.choices == ["A", "B", "C", "D"]
        assert doc.gold_index == "ABCD".index(row["answer"])
        assert gateway_key.lookup(doc.query) == package.answer_key[row["question"]], row["id"]


REQUIRED_SCRIPTS = {
    "Latin": "LATIN",
    "Cyrillic": "CYRILLIC",
    "Greek": "GREEK",
    "Arabic": "ARABIC",
    "Hebrew": "HEBREW",
    "Devanagari": "DEVANAGARI",
    "Han": "CJK UNIFIED IDEOGRAPH",
    "Thai": "THAI",
}


@pytest.fixture(scope="module")
def polyglot_package(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("polyglot") / "polyglot.eval752.zip"
    path.write_bytes(dataset_package_bytes(dataset_source("polyglot")))
    return load_dataset_package(path)


def test_polyglot_covers_every_required_script(polyglot_package: Any) -> None:
    text = "".join(r["question"] + "".join(r["choices"]) for r in polyglot_package.rows)
    names = {unicodedata.name(c, "") for c in text}
    for script, prefix in REQUIRED_SCRIPTS.items():
        assert any(n.startswith(prefix) for n in names), script
        assert script in polyglot_package.manifest["scripts"]
    assert any(0x1F300 <= ord(c) <= 0x1FAFF for c in text), "emoji"
    assert "Emoji" in polyglot_package.manifest["scripts"]
    assert {"combining-marks", "zwj-sequences"} <= set(polyglot_package.manifest["features"])
    assert len(polyglot_package.rows) >= 16
    assert any("\u0590" <= c <= "\u05ff" for c in text)  # Hebrew (RTL)
    assert any("\u0600" <= c <= "\u06ff" for c in text)  # Arabic (RTL)


@pytest.mark.parametrize(
    "sequence",
    [
        "e\u0301le\u0301ment",  # decomposed é, twice
        "Vie\u0323\u0302t",  # two stacked combining marks
        "Espan\u0303a",
        "と\u3099れ",  # combining voiced sound mark
        "Ελλάδας\u037e",  # Greek question mark: NFC would turn it into ';'
        "👩\u200d💻",  # woman technologist (ZWJ)
        "👨\u200d👩\u200d👧",  # family (two ZWJs)
        "🏳\ufe0f\u200d🌈",  # rainbow flag (variation selector + ZWJ)
    ],
)
def test_exact_code_points_survive_the_zip_round_trip(polyglot_package: Any, tmp_path: Path, sequence: str) -> None:
    assert unicodedata.normalize("NFC", sequence) != sequence or "\u200d" in sequence
    encoded = sequence.encode("utf-8")
    source_text = files("evaljig_fixtures").joinpath("data", "scaffold", "polyglot.jsonl").read_text(encoding="utf-8")
    assert sequence in source_text
    assert encoded in polyglot_package.members["test.jsonl"]
    assert any(sequence in r["question"] for r in polyglot_package.rows)
    extracted = polyglot_package.extract_to(tmp_path / "out")
    assert encoded in (extracted.parent / "test.jsonl").read_bytes()
    assert sequence in "".join(polyglot_package.answer_key)
