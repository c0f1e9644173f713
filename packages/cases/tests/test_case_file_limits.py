"""A small hostile case file cannot make a huge or endlessly deep case: alias bombs and deep nesting are errors."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from evaljig_cases import CaseLoadError, load_case_file, load_cases
from evaljig_cases._loading import MAX_ALIAS_EXPANSION, MAX_DEPTH

CASE = "id: a\ntool_id: code\nfunction_call: {name: f}\n"
#: Where a YAML problem is, as a CaseLoadError says it.
AT = r"at line \d+, column \d+"
#: Nine levels of nine aliases each: 653 bytes that expand to 9**9 strings.
BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n" for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def nested_json(levels: int) -> str:
    """A JSON case nested ``levels`` deep: the case, its ``expectations`` and ``levels - 2`` lists in ``x``."""
    lists = levels - 2
    head = '{"id": "a", "tool_id": "code", "function_call": {"name": "f"}, "expectations": {"x": '
    return head + "[" * lists + "1" + "]" * lists + "}}"


def test_an_alias_bomb_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "bomb.yaml", f"{CASE}expectations:\n  {BOMB.replace(chr(10), chr(10) + '  ')}")
    with pytest.raises(CaseLoadError, match=rf"bomb\.yaml: invalid YAML {AT}: aliases expand to more than") as e:
        load_cases(path)
    assert e.value.path == path


def test_a_bomb_built_from_merge_keys_is_refused(tmp_path: Path) -> None:
    levels = ["m0: &m0 {x: [1, 2, 3, 4, 5, 6, 7, 8]}"]
    levels += [f"m{n}: &m{n} {{p: {{<<: *m{n - 1}}}, q: {{<<: *m{n - 1}}}}}" for n in range(1, 30)]
    text = CASE + "expectations:\n" + "".join(f"  {line}\n" for line in levels)
    with pytest.raises(CaseLoadError, match=rf"merge\.yaml: invalid YAML {AT}: aliases expand to more than"):
        load_case_file(write(tmp_path, "merge.yaml", text))


def test_aliases_within_the_limit_still_load_and_serialise(tmp_path: Path) -> None:
    base = "  - &base {id: c0, tool_id: code, function_call: {name: f, args: {rows: [1, 2, 3, 4, 5, 6, 7, 8]}}}\n"
    more = "".join(f"  - {{<<: *base, id: c{n}}}\n" for n in range(1, 200))
    cases = load_cases(write(tmp_path, "shared.yaml", "cases:\n" + base + more))
    assert [c.id for c in cases] == [f"c{n}" for n in range(200)]
    assert all(c.function_call.args == {"rows": [1, 2, 3, 4, 5, 6, 7, 8]} for c in cases)
    assert len(orjson.dumps([c.model_dump() for c in cases])) < 100_000


def test_the_expansion_limit_counts_only_what_aliases_add(tmp_path: Path) -> None:
    """A big file without aliases is not an alias bomb, however many nodes it has."""
    rows = ", ".join(["1"] * (MAX_ALIAS_EXPANSION + 10))
    case = load_case_file(write(tmp_path, "big.yaml", f"{CASE}expectations: {{rows: [{rows}]}}\n"))[0]
    assert len(case.expectations["rows"]) == MAX_ALIAS_EXPANSION + 10


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CaseLoadError, match=r"loop\.yaml: invalid YAML at line 4, column \d+: recursive alias"):
        load_case_file(write(tmp_path, "loop.yaml", f"{CASE}expectations: &e {{self: *e}}\n"))


@pytest.mark.parametrize("levels", [1000, 100_000])
def test_deep_json_is_a_case_load_error(tmp_path: Path, levels: int) -> None:
    path = write(tmp_path, "deep.json", nested_json(levels))
    with pytest.raises(CaseLoadError, match=rf"deep\.json: invalid JSON: nested deeper than {MAX_DEPTH} levels") as e:
        load_cases(path)
    assert e.value.path == path


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(" " + "[" * 1000 + "]" * 1000, id="flow"),
        pytest.param("".join(f"{' ' * (n + 1)}k{n}:\n" for n in range(1000)), id="block"),
    ],
)
def test_deep_yaml_is_a_case_load_error(tmp_path: Path, body: str) -> None:
    path = write(tmp_path, "deep.yaml", f"{CASE}expectations:\n{body}\n")
    with pytest.raises(CaseLoadError, match=rf"deep\.yaml: invalid YAML {AT}: nested deeper than {MAX_DEPTH}"):
        load_cases(path)


def test_depth_made_by_aliases_is_refused(tmp_path: Path) -> None:
    chain = ["d0: &d0 " + "[" * 40 + "]" * 40]
    chain += [f"d{n}: &d{n} " + "[" * 40 + f"*d{n - 1}" + "]" * 40 for n in range(1, 4)]
    text = CASE + "expectations:\n" + "".join(f"  {line}\n" for line in chain)
    with pytest.raises(CaseLoadError, match=rf"chain\.yaml: invalid YAML {AT}: nested deeper than .* aliases"):
        load_case_file(write(tmp_path, "chain.yaml", text))


def test_nesting_up_to_the_limit_loads(tmp_path: Path) -> None:
    """``MAX_DEPTH`` levels of lists and mappings, the case itself included, is fine in both formats."""
    inner = MAX_DEPTH - 2  # the case mapping and its expectations mapping are two levels
    as_json = load_case_file(write(tmp_path, "ok.json", nested_json(inner + 2)))[0]
    as_yaml = load_case_file(write(tmp_path, "ok.yaml", f"{CASE}expectations: {{x: {'[' * inner}1{']' * inner}}}\n"))[0]
    assert as_json.expectations == as_yaml.expectations
    with pytest.raises(CaseLoadError, match="nested deeper"):
        load_case_file(write(tmp_path, "over.json", nested_json(inner + 3)))
    with pytest.raises(CaseLoadError, match="nested deeper"):
        load_case_file(
            write(tmp_path, "over.yaml", f"{CASE}expectations: {{x: {'[' * (inner + 1)}1{']' * (inner + 1)}}}\n")
        )
