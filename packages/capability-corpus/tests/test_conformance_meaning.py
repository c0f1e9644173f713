"""The structured-output and agent-tool checks fail a server that ignores what the request means.

The gateway's answer key plays the misbehaving server: it answers keyed text as given.
"""

from __future__ import annotations

import json

import pytest

from evaljig_corpus import (
    ConformanceError,
    assert_json_object_conformance,
    assert_multiturn_tools_conformance,
    assert_nested_tools_conformance,
    assert_structured_conformance,
    load_capability_fixture,
)
from evaljig_gateway import Gateway


@pytest.mark.gateway
def test_structured_fails_an_answer_that_is_not_an_instance(gateway: Gateway) -> None:
    kwargs = load_capability_fixture("structured", "valid_baseline").kwargs()
    question = kwargs["messages"][-1]["content"]
    gateway.set_answers({question: json.dumps({"name": "Ada", "orders": []})})
    with pytest.raises(ConformanceError, match=r"structured: choices\[0\]\.message\.content: content: .*required"):
        assert_structured_conformance(gateway.base_url, **kwargs)
    gateway.set_answers({question: {"content": "plain text, as a server that ignores response_format answers"}})
    with pytest.raises(ConformanceError, match="must be JSON"):
        assert_structured_conformance(gateway.base_url, **kwargs)


@pytest.mark.gateway
def test_json_object_fails_json_that_is_not_an_object(gateway: Gateway) -> None:
    kwargs = load_capability_fixture("json_object", "valid_baseline").kwargs()
    gateway.set_answers({kwargs["messages"][-1]["content"]: {"json": [1, 2]}})
    with pytest.raises(ConformanceError, match="must be a JSON object"):
        assert_json_object_conformance(gateway.base_url, **kwargs)


@pytest.mark.gateway
def test_multiturn_fails_text_where_a_tool_call_is_required(gateway: Gateway) -> None:
    kwargs = load_capability_fixture("multiturn_tools", "valid_baseline").kwargs()
    gateway.set_answers({kwargs["messages"][0]["content"]: {"turns": [{"content": "x"}, {"content": "It is sunny."}]}})
    with pytest.raises(ConformanceError, match=r"\[tool_choice=required\] choices\[0\]\.finish_reason"):
        assert_multiturn_tools_conformance(gateway.base_url, **kwargs)


@pytest.mark.gateway
def test_nested_tools_fail_arguments_that_ignore_refs(gateway: Gateway) -> None:
    kwargs = load_capability_fixture("nested_tools", "valid_baseline").kwargs()
    flat = {"tool_calls": [{"name": "create_team", "arguments": {"team": {}, "budget": 10}}]}
    gateway.set_answers({kwargs["messages"][-1]["content"]: flat})
    with pytest.raises(ConformanceError, match=r"arguments\.team: 'lead' is a required property"):
        assert_nested_tools_conformance(gateway.base_url, **kwargs)
