"""The schema-instance generator: every instance it makes is checked by ``jsonschema`` (and pydantic).

Schemas come from two places: real pydantic models (nested, recursive, unions, enums, bounds,
formats: what clients actually send) and a hypothesis strategy over schema shapes.
"""

from __future__ import annotations

import datetime
import enum
import ipaddress
import re
import subprocess
import sys
import urllib.parse
import uuid
from typing import Annotated, Any, Literal

import jsonschema
import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaljig_gateway._schema_instance import SchemaInstanceError, instance_for

# --------------------------------------------------------------------------- a validator that checks formats


FORMATS = jsonschema.FormatChecker(formats=())


@FORMATS.checks("date", raises=ValueError)
def _is_date(value: object) -> bool:
    return not isinstance(value, str) or (bool(datetime.date.fromisoformat(value)) and len(value) == 10)


@FORMATS.checks("date-time", raises=ValueError)
def _is_date_time(value: object) -> bool:
    return not isinstance(value, str) or ("T" in value and bool(datetime.datetime.fromisoformat(value)))


@FORMATS.checks("time", raises=ValueError)
def _is_time(value: object) -> bool:
    return not isinstance(value, str) or bool(datetime.time.fromisoformat(value))


@FORMATS.checks("email")
def _is_email(value: object) -> bool:
    return not isinstance(value, str) or re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]+", value) is not None


@FORMATS.checks("uri")
def _is_uri(value: object) -> bool:
    parts = urllib.parse.urlsplit(value) if isinstance(value, str) else None
    return parts is None or bool(parts.scheme and parts.netloc)


@FORMATS.checks("uuid", raises=ValueError)
def _is_uuid(value: object) -> bool:
    return not isinstance(value, str) or bool(uuid.UUID(value))


@FORMATS.checks("ipv4", raises=ValueError)
def _is_ipv4(value: object) -> bool:
    return not isinstance(value, str) or bool(ipaddress.IPv4Address(value))


@FORMATS.checks("ipv6", raises=ValueError)
def _is_ipv6(value: object) -> bool:
    return not isinstance(value, str) or bool(ipaddress.IPv6Address(value))


def check(schema: Any, value: Any) -> None:
    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    validator_class(schema, format_checker=FORMATS).validate(value)


# --------------------------------------------------------------------------- real pydantic models


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Address(pydantic.BaseModel):
    street: str = pydantic.Field(min_length=12, max_length=40)
    zip: str = pydantic.Field(pattern=r"^\d{5}(-\d{4})?$")
    country: Literal["FR", "DE"] = "FR"


class Node(pydantic.BaseModel):
    name: str
    children: list[Node] = []
    parent: Node | None = None


class Cat(pydantic.BaseModel):
    kind: Literal["cat"]
    lives: int = pydantic.Field(ge=1, le=9)


class Dog(pydantic.BaseModel):
    kind: Literal["dog"]
    bark: float = pydantic.Field(gt=0, lt=1, multiple_of=0.25)


class Person(pydantic.BaseModel):
    id: uuid.UUID
    born: datetime.date
    seen: datetime.datetime
    site: pydantic.AnyUrl
    color: Color
    address: Address
    others: list[Address] = pydantic.Field(min_length=2, max_length=3)
    pet: Annotated[Cat | Dog, pydantic.Field(discriminator="kind")]
    tree: Node
    tags: set[str] = pydantic.Field(min_length=3)
    pair: tuple[int, str]
    score: Annotated[int, pydantic.Field(gt=10, lt=20, multiple_of=3)]
    ratio: Annotated[float, pydantic.Field(ge=0, le=1)]
    scores: dict[str, int]
    note: str | None = None


class Strict(pydantic.BaseModel):
    """OpenAI strict mode: every property required, no others allowed."""

    model_config = pydantic.ConfigDict(extra="forbid")
    steps: list[Address]
    final: Person


MODELS: list[type[pydantic.BaseModel]] = [Person, Node, Address, Strict, Cat]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("seed", [str(i) for i in range(12)])
def test_pydantic_models_get_valid_instances(model: type[pydantic.BaseModel], seed: str) -> None:
    schema = model.model_json_schema()
    value = instance_for(schema, seed=seed)
    check(schema, value)
    model.model_validate(value)


def test_same_seed_same_value_other_seed_other_value() -> None:
    schema = Person.model_json_schema()
    assert instance_for(schema, seed="a") == instance_for(schema, seed="a")
    assert instance_for(schema, seed="a") != instance_for(schema, seed="b")


def test_values_do_not_depend_on_the_hash_seed() -> None:
    """Negated classes and sets must not leak ``PYTHONHASHSEED`` into answers."""
    code = (
        "import orjson; from evaljig_gateway._schema_instance import instance_for;"
        "s={'type':'object','properties':{'a':{'type':'string','pattern':'^[^aeiou]{8}$'},"
        "'b':{'type':'array','uniqueItems':True,'minItems':4,'items':{'enum':[1,2,3,4,5,6]}}}};"
        "print(orjson.dumps(instance_for(s, seed='x')).decode())"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code], env={"PYTHONHASHSEED": h}, capture_output=True, text=True, check=True
        ).stdout
        for h in ("0", "1", "2")
    }
    assert len(outs) == 1


def test_recursion_is_bounded_by_the_non_recursive_branch() -> None:
    schema = {
        "$defs": {
            "list": {
                "type": "object",
                "properties": {
                    "head": {"type": "integer"},
                    "tail": {"anyOf": [{"$ref": "#/$defs/list"}, {"type": "null"}]},
                },
                "required": ["head", "tail"],
            }
        },
        "$ref": "#/$defs/list",
    }
    value = instance_for(schema, seed="deep")
    check(schema, value)
    depth = 0
    while value is not None:
        value, depth = value["tail"], depth + 1
    assert 1 <= depth <= 4


def test_a_schema_without_a_finite_instance_is_an_error_naming_the_place() -> None:
    schema = {"type": "object", "properties": {"next": {"$ref": "#"}}, "required": ["next"]}
    with pytest.raises(SchemaInstanceError, match="recurses"):
        instance_for(schema, seed="x")
    with pytest.raises(SchemaInstanceError, match="#/properties/n: no integer"):
        instance_for({"properties": {"n": {"type": "integer", "minimum": 3, "maximum": 2}}}, seed="x")
    with pytest.raises(SchemaInstanceError, match="does not resolve"):
        instance_for({"$ref": "#/$defs/missing"}, seed="x")


def _tagged_union(*values: dict[str, Any]) -> dict[str, Any]:
    """``anyOf`` of one-branch ``oneOf`` unions tagged alike (found by hypothesis): only ``v`` differs."""
    defs = {
        f"d{i}": {"oneOf": [{"type": "object", "properties": {"tag": {"const": 0}, "v": v}, "required": ["tag", "v"]}]}
        for i, v in enumerate(values)
    }
    return {"anyOf": [{"$ref": f"#/$defs/{name}"} for name in defs], "$defs": defs}


@pytest.mark.parametrize("seed", [str(i) for i in range(8)])
def test_an_undecided_branch_does_not_sink_an_any_of_whose_other_branch_passes(seed: str) -> None:
    """A ``oneOf`` that cannot tell whether ``""`` matches ``^[a-z]{3}$`` is unknown, not a refusal: the
    ``anyOf`` around it passes on its other branch, which the value was drawn from."""
    schema = _tagged_union({"type": "string", "pattern": "^[a-z]{3}$"}, {"type": "string", "maxLength": 0})
    check(schema, instance_for(schema, seed=seed))


def _outcome(schema: dict[str, Any], seed: str) -> str:
    try:
        check(schema, instance_for(schema, seed=seed))
    except SchemaInstanceError as exc:
        return str(exc).split(": ", 1)[1]
    return "instance"


def test_a_verdict_that_hangs_on_an_unknown_match_is_still_refused() -> None:
    """``""`` drawn from the second ``oneOf`` branch: exactly one branch holds only if the pattern does not match."""
    schema = {"oneOf": [{"type": "string", "pattern": "^[a-z]{3}$"}, {"type": "string", "maxLength": 0}]}
    assert {_outcome(schema, str(seed)) for seed in range(16)} == {
        "instance",
        "whether '' satisfies oneOf depends on a pattern the value was not drawn for "
        "(the gateway runs no regex engine on values): not supported",
    }


def test_a_format_the_gateway_generates_is_asserted_not_an_annotation() -> None:
    """``if``/``else`` is not followed, so the walk made a word where ``else`` asks for a date (found by
    hypothesis): the final check asserts the formats clients parse, so that is a 400, never a 200."""
    schema = {
        "if": {"allOf": [{"const": 0}, {"const": 0}]},
        "then": {"type": "object", "required": ["a"]},
        "else": {"type": "string", "format": "date"},
    }
    with pytest.raises(SchemaInstanceError, match=r"^#/else/format: .*'bravo' is not a 'date'"):
        instance_for(schema, seed="")


def test_huge_min_items_is_refused_not_generated() -> None:
    with pytest.raises(SchemaInstanceError, match="more than"):
        instance_for({"type": "array", "minItems": 10_000_000}, seed="x")


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": r"^[A-Z]{2}-\d{3,5}$"},
        {"type": "string", "pattern": r"^(foo|bar)+baz?$", "minLength": 9},
        {"type": "string", "pattern": r"[a-f0-9]{8}", "maxLength": 8},
        {"type": "string", "pattern": r"^\w+@\w+\.(com|org)$"},
        {"type": "string", "pattern": r"^(?P<y>\d{4})-(?P=y)$"},
        {"type": "string", "minLength": 30, "maxLength": 31},
        {"type": "string", "format": "date-time"},
        {"type": "integer", "exclusiveMinimum": 5, "exclusiveMaximum": 7},
        {"type": "number", "minimum": 0.1, "maximum": 0.3, "multipleOf": 0.1},
        {"type": "number", "exclusiveMinimum": 0, "maximum": 0.0001},
        {"type": "integer", "minimum": 5, "exclusiveMinimum": True, "maximum": 6},  # draft 4
        {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False},
        {"type": "array", "items": {"type": "boolean"}, "uniqueItems": True, "minItems": 2},
        {"type": "array", "contains": {"const": 7}, "items": {"type": "integer"}},
        {"type": "object", "minProperties": 3, "properties": {"a": {"type": "null"}}},
        {"type": "object", "maxProperties": 1, "properties": {"a": {}, "b": {}}, "required": ["b"]},
        {"allOf": [{"properties": {"a": {"type": "integer"}}}, {"properties": {"a": {"minimum": 50}}}]},
        {"oneOf": [{"type": "string"}, {"type": "null"}]},
        {"type": ["null", "integer"], "minimum": 1000},
        {"enum": [1, "one", None], "type": "string"},
    ],
)
def test_keyword_cases(schema: dict[str, Any]) -> None:
    for seed in ("a", "b", "c"):
        check(schema, instance_for(schema, seed=seed))


# --------------------------------------------------------------------------- schemas drawn by hypothesis

_PATTERNS = [r"^[a-z]{3}$", r"^\d+$", r"^(yes|no)$", r"^[A-Z][a-z]*( [A-Z][a-z]*)*$", r"x", r"^[^\s]{2,4}$"]


def _strings() -> st.SearchStrategy[dict[str, Any]]:
    lengths = st.tuples(st.integers(0, 12), st.integers(0, 12)).map(sorted)
    return st.one_of(
        lengths.map(lambda b: {"type": "string", "minLength": b[0], "maxLength": b[1]}),
        st.sampled_from(_PATTERNS).map(lambda p: {"type": "string", "pattern": p}),
        st.sampled_from(["date", "date-time", "email", "uri", "uuid", "ipv4", "ipv6", "time"]).map(
            lambda f: {"type": "string", "format": f}
        ),
    )


def _numbers() -> st.SearchStrategy[dict[str, Any]]:
    def build(kind: str, low: int, width: int, open_low: bool, open_high: bool, step: int | float | None) -> Any:
        schema: dict[str, Any] = {"type": kind}
        schema["exclusiveMinimum" if open_low else "minimum"] = low
        schema["exclusiveMaximum" if open_high else "maximum"] = low + width
        if step is not None:
            schema["multipleOf"] = step
        return schema

    return st.builds(
        build,
        st.sampled_from(["integer", "number"]),
        st.integers(-1000, 1000),
        st.integers(12, 500),  # room for a multiple of the largest step, bounds open or not
        st.booleans(),
        st.booleans(),
        st.one_of(st.none(), st.sampled_from([1, 2, 5, 0.5, 0.25])),
    )


_INTS = st.integers(-(2**63), 2**63 - 1)  # what orjson (the gateway's JSON) reads and writes
_LEAVES = st.one_of(
    _strings(),
    _numbers(),
    st.just({"type": "boolean"}),
    st.just({"type": "null"}),
    st.lists(st.one_of(_INTS, st.text(max_size=5), st.none()), min_size=1, max_size=4, unique=True).map(
        lambda v: {"enum": v}
    ),
    _INTS.map(lambda v: {"const": v}),
    st.just({}),
)
_NAMES = st.text("abcdefgh", min_size=1, max_size=4)


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    def obj(props: dict[str, Any], required: list[str], closed: bool) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": props,
            "required": [r for r in required if r in props],
        }
        if closed:
            schema["additionalProperties"] = False
        return schema

    def arr(items: Any, low: int, extra: int) -> dict[str, Any]:
        return {"type": "array", "items": items, "minItems": low, "maxItems": low + extra}

    def tagged(branches: list[dict[str, Any]]) -> dict[str, Any]:
        """A pydantic-style discriminated union: each branch an object with its own ``const`` tag."""
        return {
            "oneOf": [
                {"type": "object", "properties": {"tag": {"const": i}, "v": b}, "required": ["tag", "v"]}
                for i, b in enumerate(branches)
            ]
        }

    return st.one_of(
        st.builds(obj, st.dictionaries(_NAMES, children, max_size=4), st.lists(_NAMES, max_size=4), st.booleans()),
        st.builds(arr, children, st.integers(0, 3), st.integers(0, 3)),
        st.lists(children, min_size=1, max_size=3).map(lambda b: {"anyOf": b}),
        st.lists(children, min_size=1, max_size=3).map(tagged),
        st.tuples(children, children).map(lambda t: {"type": "array", "prefixItems": list(t), "items": False}),
        st.tuples(children, children).map(
            lambda t: {"allOf": [{"properties": {"p": t[0]}, "required": ["p"]}, {"properties": {"q": t[1]}}]}
        ),
        children.map(lambda c: {"__def__": c}),  # made a root ``$defs`` entry and a ``$ref`` by _hoisted
        children.map(lambda c: {"type": ["null", "object"], "properties": {"c": c}}),
    )


def _hoisted(schema: Any) -> Any:
    """Every ``__def__`` marker becomes ``{"$ref": "#/$defs/dN"}`` with its schema under the root's ``$defs``."""
    defs: dict[str, Any] = {}

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict) or "const" in node or "enum" in node:
            return node
        if "__def__" in node:
            name = f"d{len(defs)}"
            defs[name] = None
            defs[name] = walk(node["__def__"])
            return {"$ref": f"#/$defs/{name}"}
        return {k: walk(v) for k, v in node.items()}

    out = walk(schema)
    if defs:
        out = {"allOf": [out]} if not isinstance(out, dict) else out
        out = {**out, "$defs": defs}
    return out


SCHEMAS = st.recursive(_LEAVES, _extend, max_leaves=12).map(_hoisted)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=SCHEMAS, seed=st.text(max_size=8))
def test_every_instance_is_valid(schema: Any, seed: str) -> None:
    check(schema, instance_for(schema, seed=seed))


@settings(max_examples=100, deadline=None)
@given(schema=SCHEMAS)
def test_every_instance_is_valid_under_recursion(schema: Any) -> None:
    """The drawn schema as the leaf of a recursive ``$defs`` tree, the way pydantic writes recursive models."""
    defs = schema.pop("$defs", {}) if isinstance(schema, dict) else {}
    wrapped = {
        "$defs": {
            **defs,
            "tree": {
                "type": "object",
                "properties": {
                    "leaf": {"$ref": "#/$defs/leaf"},
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}},
                },
                "required": ["leaf", "kids"],
                "additionalProperties": False,
            },
            "leaf": schema,
        },
        "$ref": "#/$defs/tree",
    }
    check(wrapped, instance_for(wrapped, seed="r"))
