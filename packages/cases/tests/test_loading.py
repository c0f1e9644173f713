"""Loading case files and folders: formats, order, and errors that name the file and the case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from evaljig_cases import CaseLoadError, DuplicateCaseError, EvalCase, load_case_file, load_cases


def case(case_id: str, **extra: Any) -> dict[str, Any]:
    return {"id": case_id, "tool_id": "code", "function_call": {"name": "f", "args": {"x": 1}}, **extra}


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data) if path.suffix == ".json" else yaml.safe_dump(data, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(lambda: case("a"), id="single"),
        pytest.param(lambda: [case("a"), case("b")], id="list"),
        pytest.param(lambda: {"cases": [case("a"), case("b")]}, id="cases-key"),
    ],
)
@pytest.mark.parametrize("suffix", [".json", ".yaml", ".yml"])
def test_file_shapes(tmp_path: Path, shape: Any, suffix: str) -> None:
    data = shape()
    cases = load_cases(write(tmp_path / f"cases{suffix}", data))
    expected = ["a"] if isinstance(data, dict) and "id" in data else ["a", "b"]
    assert [c.id for c in cases] == expected
    assert cases[0].function_call.args == {"x": 1}
    assert cases[0].source == str(tmp_path / f"cases{suffix}")


def test_every_field_round_trips(tmp_path: Path) -> None:
    full = case(
        "full",
        description="all fields",
        expectations={"answer": 3.5, "artifacts": ["plot.png"]},
        artifact_mocks={"sales": [{"region": "n", "amount": 1}]},
    )
    (loaded,) = load_cases(write(tmp_path / "full.yaml", full))
    assert loaded.model_dump(mode="json") == {**full, "function_call": {"name": "f", "args": {"x": 1}}}
    assert EvalCase.model_validate(loaded.model_dump(mode="json")) == loaded


def test_folder_is_recursive_and_sorted_by_relative_path(tmp_path: Path) -> None:
    write(tmp_path / "b.json", [case("b1"), case("b2")])
    write(tmp_path / "a.yaml", case("a1"))
    write(tmp_path / "sub" / "c.yml", case("c1"))
    (tmp_path / "notes.txt").write_text("ignored")
    (tmp_path / ".hidden.yaml").write_text("not: [valid")
    assert [c.id for c in load_cases(tmp_path)] == ["a1", "b1", "b2", "c1"]


def test_empty_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CaseLoadError, match="no case files"):
        load_cases(tmp_path)


def test_validation_error_names_file_case_and_field(tmp_path: Path) -> None:
    bad = write(tmp_path / "cases.yaml", [case("fine"), {"id": "broken", "tool_id": "code", "function_call": {}}])
    with pytest.raises(CaseLoadError) as info:
        load_cases(tmp_path)
    assert str(info.value) == f"{bad}: case 'broken' (#1): function_call.name: Field required"
    assert (info.value.path, info.value.case) == (bad, "broken")


def test_case_without_id_is_named_by_position(tmp_path: Path) -> None:
    bad = write(tmp_path / "cases.json", [case("ok"), {"tool_id": "code", "function_call": {"name": "f"}}])
    with pytest.raises(CaseLoadError, match=r"cases\.json: case #1: id: Field required"):
        load_cases(bad)


def test_unknown_keys_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(CaseLoadError, match=r"case 'a' \(#0\): expectation: Extra inputs are not permitted"):
        load_cases(write(tmp_path / "c.yaml", case("a", expectation={})))


def test_unsafe_case_ids_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(CaseLoadError, match=r"case 'a b' \(#0\): id: String should match pattern"):
        load_cases(write(tmp_path / "c.yaml", case("a b")))


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("c.yaml", "cases: [\n  {id: x", r"c\.yaml: invalid YAML at line \d+"),
        ("c.json", '[{"id": }]', r"c\.json: invalid JSON at line 1"),
        ("c.yaml", "", r"c\.yaml: expected a case, a list of cases or \{cases: \[...\]\}, found no cases"),
        ("c.yaml", "- just a string", r"c\.yaml: case #0: expected a mapping, got str"),
    ],
)
def test_unparsable_files_name_the_file(tmp_path: Path, name: str, text: str, message: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(CaseLoadError, match=message):
        load_cases(tmp_path / name)


def test_wrong_suffix_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CaseLoadError, match=r"not a case file"):
        load_case_file(tmp_path / "cases.txt")
    with pytest.raises(CaseLoadError, match=r"missing\.yaml: cannot read"):
        load_case_file(tmp_path / "missing.yaml")


def test_duplicate_ids_in_one_file(tmp_path: Path) -> None:
    f = write(tmp_path / "c.yaml", [case("same"), case("same")])
    with pytest.raises(DuplicateCaseError, match=rf"duplicate case id 'same': defined in {f} and again in {f}"):
        load_cases(f)


def test_duplicate_ids_across_files_name_both(tmp_path: Path) -> None:
    a = write(tmp_path / "a.yaml", case("same"))
    b = write(tmp_path / "b.json", [case("other"), case("same")])
    with pytest.raises(DuplicateCaseError) as info:
        load_cases(tmp_path)
    assert str(info.value) == f"duplicate case id 'same': defined in {a} and again in {b}"
    assert info.value.case == "same"


def test_a_file_that_is_not_utf8_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "cases.yaml"
    bad.write_bytes(b"id: caf\xe9\n")
    with pytest.raises(CaseLoadError, match=rf"^{bad}: not valid UTF-8 \(byte 7: invalid continuation byte\)$"):
        load_cases(bad)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "c.yaml",
            "id: a\ntool_id: code\nfunction_call:\n  name: f\n  name: g\n",
            r"c\.yaml: invalid YAML at line 5, column \d+: the key 'name' is repeated in one mapping",
        ),
        (
            "c.yaml",
            "- id: a\n  tool_id: code\n  id: b\n",
            r"c\.yaml: invalid YAML at line 3, column \d+: the key 'id' is repeated in one mapping",
        ),
        ("c.json", '{"id": "a", "tool_id": "code", "id": "b"}', r"c\.json: invalid JSON: duplicate key 'id'"),
        (
            "c.yaml",
            "id: !!timestamp soon\n",
            r"c\.yaml: invalid YAML at line 1, column 5: the value 'soon' is not a valid",
        ),
    ],
)
def test_duplicate_keys_are_rejected_naming_file_key_and_line(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(CaseLoadError, match=message):
        load_cases(tmp_path / name)


def test_yaml_merge_keys_may_override(tmp_path: Path) -> None:
    text = "cases:\n  - &b {id: a, tool_id: code, function_call: {name: f}}\n  - <<: *b\n    id: b\n"
    (tmp_path / "c.yaml").write_text(text)
    assert [c.id for c in load_cases(tmp_path / "c.yaml")] == ["a", "b"]


def test_suffixes_are_matched_in_any_case(tmp_path: Path) -> None:
    (tmp_path / "a.JSON").write_text(json.dumps(case("a1")))
    write(tmp_path / "b.Yaml", case("b1"))
    write(tmp_path / "c.YML", case("c1"))
    assert [c.id for c in load_cases(tmp_path)] == ["a1", "b1", "c1"]
    assert [c.id for c in load_case_file(tmp_path / "a.JSON")] == ["a1"]


def test_files_in_hidden_folders_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / ".cases-root"  # the root itself may be hidden
    write(root / "a.yaml", case("a1"))
    write(root / ".git" / "b.yaml", case("a1"))  # would be a duplicate id if it were read
    write(root / "sub" / ".backup" / "c.yaml", "not: [valid")
    assert [c.id for c in load_cases(root)] == ["a1"]


#: A case file in the tool-eval proposal's shape, committed as its users would write it.
PROPOSAL_FILE = Path(__file__).parent / "aliased_cases" / "analysis.json"
PROPOSAL_CASES = json.loads(PROPOSAL_FILE.read_text(encoding="utf-8"))


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_proposal_shaped_case_files_load_unchanged(tmp_path: Path, suffix: str) -> None:
    """The tool-eval proposal's case files (a list with case_id, artifact_mock, ...) load as they are."""
    path = PROPOSAL_FILE if suffix == ".json" else write(tmp_path / "proposal.yaml", PROPOSAL_CASES)
    sales, no_mock = load_cases(path)
    assert (sales.case_id, sales.id, no_mock.case_id) == ("sales_total", "sales_total", "no_mock")
    frame = [{"region": "north", "revenue": 40}, {"region": "south", "revenue": 2}]
    assert sales == EvalCase(
        id="sales_total",
        description="Total revenue of the mocked frame.",
        tool_id="analysis_code_execution",
        function_call={"name": "run_code", "args": {"query": "total revenue"}},
        expectations={"answer": 42},
        artifact_mocks={"df_0.csv": frame},
    )
    assert sales.artifact_mock == {"dataframes": [frame]}
    assert (no_mock.description, no_mock.artifact_mocks, no_mock.artifact_mock) == ("", {}, {"dataframes": []})


def test_evaljig_and_proposal_names_together_are_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "both.json", [{**case("a"), "case_id": "b"}])
    with pytest.raises(CaseLoadError) as info:
        load_cases(path)
    assert str(info.value) == f"{path}: case 'a' (#0): (case): Value error, give 'id' or its alias 'case_id', not both"


def test_a_proposal_case_error_names_the_case_id(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.json", [{**PROPOSAL_CASES[0], "function_call": {"args": {}}}])
    with pytest.raises(CaseLoadError, match=r"case 'sales_total' \(#0\): function_call.name: Field required"):
        load_cases(path)
