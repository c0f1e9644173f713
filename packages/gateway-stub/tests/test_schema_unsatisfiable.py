"""Instances or a refusal: over drawn schemas, unsatisfiable and unsupported ones included, every answer is an
instance of its schema (checked here with ``jsonschema``, whose ``re`` may run on these small test patterns)
or a ``SchemaInstanceError`` naming the place; over HTTP a 200 or a 400, never a 500.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaljig_gateway._schema_instance import SchemaInstanceError, instance_for

from .test_schema_instance import SCHEMAS, check

_INTS = st.integers(-4, 4)
_WORDS = st.lists(st.sampled_from(["a", "bb", "ccc", "x1", "", "dddd"]), min_size=1, max_size=4, unique=True)
_PATTERNS = st.sampled_from(["^a", "b$", "^[a-c]{2,3}$", "^\\d+$", "x", "^(ab|cd)*$", "^.{4}$"])


def _poison() -> st.SearchStrategy[dict[str, Any]]:
    """Schemas that are often unsatisfiable, or use keywords the generator does not follow."""
    return st.one_of(
        st.tuples(_INTS, _INTS).map(lambda ab: {"allOf": [{"const": ab[0]}, {"const": ab[1]}]}),
        st.tuples(st.lists(_INTS, min_size=1, max_size=4), _INTS).map(lambda t: {"enum": t[0], "minimum": t[1]}),
        st.tuples(_WORDS, st.integers(0, 4), st.integers(0, 4)).map(
            lambda t: {"enum": t[0], "minLength": t[1], "maxLength": t[2]}
        ),
        st.tuples(_WORDS, _PATTERNS).map(lambda t: {"enum": t[0], "pattern": t[1]}),
        st.tuples(st.integers(0, 6), st.integers(0, 6)).map(
            lambda t: {"type": "string", "minLength": t[0], "maxLength": t[1]}
        ),
        st.tuples(_INTS, _INTS).map(lambda t: {"type": "integer", "minimum": t[0], "maximum": t[1]}),
        st.tuples(st.sampled_from([1e-300, 0.3, 7, 1e300, 2.5]), _INTS, st.integers(0, 20)).map(
            lambda t: {"type": "number", "multipleOf": t[0], "minimum": t[1], "maximum": t[1] + t[2] / 10}
        ),
        st.tuples(_PATTERNS, st.integers(0, 6), st.integers(0, 6)).map(
            lambda t: {"type": "string", "pattern": t[0], "minLength": t[1], "maxLength": t[2]}
        ),
        st.tuples(_PATTERNS, _PATTERNS).map(
            lambda t: {"type": "string", "allOf": [{"pattern": t[0]}, {"pattern": t[1]}]}
        ),
        st.integers(0, 4).map(
            lambda k: {"type": "array", "items": {"enum": [1, 2]}, "uniqueItems": True, "minItems": k}
        ),
        st.just({"type": "object", "additionalProperties": False, "required": ["a"]}),
        st.just({"type": "object", "patternProperties": {"^x": {"type": "integer"}}, "minProperties": 1}),
        st.just({"type": "array", "contains": {"type": "string", "pattern": "^q"}, "maxContains": 1}),
    )


def _combine(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        inner.map(lambda s: {"not": s}),
        st.tuples(inner, inner, inner).map(lambda t: {"if": t[0], "then": t[1], "else": t[2]}),
        st.lists(inner, min_size=2, max_size=3).map(lambda b: {"oneOf": b}),
        st.lists(inner, min_size=2, max_size=3).map(lambda b: {"anyOf": b}),
        st.lists(inner, min_size=2, max_size=3).map(lambda b: {"allOf": b}),
        st.dictionaries(st.sampled_from(["p", "q"]), inner, min_size=1).map(
            lambda props: {"type": "object", "properties": props, "required": list(props)}
        ),
        inner.map(lambda s: {"type": "array", "items": s, "minItems": 1}),
    )


MIXED = st.recursive(st.one_of(_poison(), SCHEMAS), _combine, max_leaves=5)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=MIXED, seed=st.text(max_size=4))
def test_an_instance_or_a_refusal_naming_the_place(schema: Any, seed: str) -> None:
    try:
        value = instance_for(schema, seed=seed)
    except SchemaInstanceError as exc:
        where, reason = exc.where, exc.reason
        assert where.startswith("#"), str(exc)  # noqa: PT017
        assert reason, str(exc)  # noqa: PT017
        return
    check(schema, value)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(schema=MIXED)
def test_over_http_a_200_is_an_instance_and_anything_else_a_400(http: httpx.Client, schema: Any) -> None:
    body = {
        "model": "gpt-stub",
        "messages": [{"role": "user", "content": "answer"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}},
    }
    reply = http.post("/v1/chat/completions", json=body)
    if reply.status_code == 200:
        check(schema, json.loads(reply.json()["choices"][0]["message"]["content"]))
    else:
        assert reply.status_code == 400, reply.text
        error = reply.json()["error"]
        assert error["param"].startswith("response_format.json_schema.schema"), error
        assert error["message"], error
