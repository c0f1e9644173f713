"""Property-based fuzzing of every endpoint's body: whatever a client sends, the gateway never answers 500.

A 500 is what the OpenAI SDK retries (three times), so a crash on bad input costs a test run
minutes and hides the real error. Bodies are built from each endpoint's own field names with
values that are sometimes plausible and sometimes any JSON at all, so the generator reaches
past the first check into the later ones. Runs are derandomized: the same examples every time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaljig_gateway import Behaviour, Gateway, Limits, behaviour_for

#: Small limits: the fuzzer reaches them (and their boundaries) without waiting on big answers.
FUZZ_LIMITS = Limits(max_embedding_values=4096, max_choices=16, max_output_tokens=4096, max_echo_tokens=4096)
FUZZ = settings(
    max_examples=300,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),  # what orjson reads as a number
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _plain(name: str) -> bool:
    """A model name whose behaviour is to succeed: failures, stalls and delays are what those names are for."""
    return behaviour_for(name) == Behaviour()


models = st.one_of(st.sampled_from(["gpt-stub", "openai/gpt", "m"]), st.text(max_size=30).filter(_plain), json_values)
small_ints = st.one_of(st.integers(min_value=-2, max_value=40), json_values)
texts = st.one_of(st.text(max_size=60), json_values)
roles = st.one_of(st.sampled_from(["system", "developer", "user", "assistant", "tool", "function"]), json_values)
parts = st.lists(st.one_of(st.fixed_dictionaries({"type": st.just("text"), "text": texts}), json_values), max_size=3)
messages = st.lists(
    st.one_of(
        st.fixed_dictionaries({"role": roles}, optional={"content": st.one_of(texts, parts), "name": texts}),
        json_values,
    ),
    max_size=4,
)
schema_types = st.one_of(
    st.sampled_from(["object", "array", "string", "integer", "number", "boolean", "null"]), json_values
)
leaf_schemas = st.fixed_dictionaries({}, optional={"type": schema_types, "enum": json_values, "const": json_values})


def _nested_schemas(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    properties = st.one_of(st.dictionaries(st.text(max_size=6), inner, max_size=3), json_values)
    return st.fixed_dictionaries(
        {},
        optional={"type": schema_types, "properties": properties, "items": st.one_of(inner, json_values)},
    )


schemas = st.recursive(leaf_schemas, _nested_schemas, max_leaves=8)
tools = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {"type": st.one_of(st.just("function"), json_values)},
            optional={"function": st.one_of(
                st.fixed_dictionaries({"name": st.one_of(st.sampled_from(["f", "g"]), json_values)},
                                      optional={"parameters": st.one_of(schemas, json_values)}),
                json_values)},
        ),
        json_values,
    ),
    max_size=3,
)  # fmt: skip
tool_choices = st.one_of(
    st.sampled_from(["none", "auto", "required"]),
    st.fixed_dictionaries({"type": st.just("function"), "function": st.one_of(
        st.fixed_dictionaries({"name": st.one_of(st.sampled_from(["f", "g"]), json_values)}), json_values)}),
    json_values,
)  # fmt: skip
stops = st.one_of(st.text(max_size=5), st.lists(st.text(max_size=5), max_size=6), json_values)
numbers = st.one_of(st.floats(min_value=-3, max_value=3), json_values)
prompts = st.one_of(
    st.text(max_size=80),
    st.lists(st.text(max_size=40), max_size=5),
    st.lists(st.integers(min_value=0, max_value=100_000), max_size=10),
    st.lists(st.lists(st.integers(min_value=0, max_value=100_000), max_size=5), max_size=3),
    json_values,
)
COMMON = {"temperature": numbers, "top_p": numbers, "user": texts, "metadata": json_values, "seed": small_ints}

BODIES: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "/v1/chat/completions": st.fixed_dictionaries(
        {"model": models, "messages": messages},
        optional={**COMMON, "n": small_ints, "max_tokens": small_ints, "max_completion_tokens": small_ints,
                  "stop": stops, "stream": json_values | st.booleans(), "logprobs": json_values | st.booleans(),
                  "top_logprobs": small_ints, "tools": tools, "tool_choice": tool_choices,
                  "stream_options": st.one_of(st.fixed_dictionaries({"include_usage": json_values}), json_values),
                  "presence_penalty": numbers, "frequency_penalty": numbers, "response_format": json_values},
    ),
    "/v1/completions": st.fixed_dictionaries(
        {"model": models, "prompt": prompts},
        optional={**COMMON, "n": small_ints, "max_tokens": small_ints, "stop": stops,
                  "stream": json_values | st.booleans(), "echo": json_values | st.booleans(),
                  "logprobs": small_ints, "stream_options": json_values, "suffix": texts},
    ),
    "/v1/embeddings": st.fixed_dictionaries(
        {"model": models, "input": prompts},
        optional={"dimensions": small_ints, "encoding_format": st.one_of(st.sampled_from(["float", "base64"]),
                                                                         json_values), "user": texts},
    ),
    "/v1/responses": st.fixed_dictionaries(
        {"model": models, "input": st.one_of(texts, messages)},
        optional={**COMMON, "instructions": texts, "max_output_tokens": small_ints,
                  "stream": json_values | st.booleans(), "tools": tools, "tool_choice": tool_choices},
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def fuzz_http() -> Iterator[httpx.Client]:
    with Gateway(limits=FUZZ_LIMITS) as gw, httpx.Client(base_url=gw.url, timeout=30) as client:
        yield client


def _check(http: httpx.Client, path: str, body: Any) -> None:
    reply = http.post(path, content=orjson.dumps(body), headers={"content-type": "application/json"})
    assert reply.status_code != 500, f"{path} answered 500 to {body!r}: {reply.text}"
    if reply.status_code >= 400:
        error = reply.json()["error"]
        assert isinstance(error["message"], str), reply.text


@pytest.mark.parametrize("path", sorted(BODIES))
def test_no_body_makes_an_endpoint_answer_500(fuzz_http: httpx.Client, path: str) -> None:
    @FUZZ
    @given(body=BODIES[path])
    def run(body: dict[str, Any]) -> None:
        _check(fuzz_http, path, body)

    run()


@pytest.mark.parametrize("path", sorted(BODIES))
def test_no_json_value_makes_an_endpoint_answer_500(fuzz_http: httpx.Client, path: str) -> None:
    """Not even an object: any JSON document as the body."""

    @FUZZ
    @given(body=json_values)
    def run(body: Any) -> None:
        _check(fuzz_http, path, body)

    run()
