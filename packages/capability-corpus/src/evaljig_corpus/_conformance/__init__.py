"""``assert_<capability>_conformance(target, **payload)``: one response-contract check per capability."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from evaljig_corpus._conformance.agent_tools import (
    assert_multiturn_tools_conformance,
    assert_nested_tools_conformance,
)
from evaljig_corpus._conformance.answers import assert_reasoning_conformance, assert_truncation_conformance
from evaljig_corpus._conformance.broken_stream import assert_broken_stream_conformance
from evaljig_corpus._conformance.chat import assert_chat_conformance, assert_logprobs_conformance
from evaljig_corpus._conformance.completion import assert_completion_conformance
from evaljig_corpus._conformance.embed import assert_embed_conformance
from evaljig_corpus._conformance.limits import assert_token_limits_conformance
from evaljig_corpus._conformance.loglikelihood import assert_loglikelihood_conformance
from evaljig_corpus._conformance.model_list import assert_models_conformance
from evaljig_corpus._conformance.responses import (
    assert_responses_stream_conformance,
    assert_responses_tools_conformance,
)
from evaljig_corpus._conformance.stream import assert_stream_conformance
from evaljig_corpus._conformance.structured import assert_json_object_conformance, assert_structured_conformance
from evaljig_corpus._conformance.tools import assert_broken_tools_conformance, assert_tools_conformance

#: Capability -> its helper; a fixture's ``payload`` keys are that helper's keyword arguments.
CONFORMANCE_CHECKS: Mapping[str, Callable[..., Any]] = MappingProxyType(
    {
        "chat": assert_chat_conformance,
        "completion": assert_completion_conformance,
        "stream": assert_stream_conformance,
        "embed": assert_embed_conformance,
        "tools": assert_tools_conformance,
        "logprobs": assert_logprobs_conformance,
        "models": assert_models_conformance,
        "loglikelihood": assert_loglikelihood_conformance,
        "responses_tools": assert_responses_tools_conformance,
        "responses_stream": assert_responses_stream_conformance,
        "json_object": assert_json_object_conformance,
        "structured": assert_structured_conformance,
        "multiturn_tools": assert_multiturn_tools_conformance,
        "nested_tools": assert_nested_tools_conformance,
        "reasoning": assert_reasoning_conformance,
        "truncation": assert_truncation_conformance,
        "broken_stream": assert_broken_stream_conformance,
        "token_limits": assert_token_limits_conformance,
        "broken_tools": assert_broken_tools_conformance,
    }
)
#: The capabilities whose fixtures ask a target to *play* a failure (by the gateway's model-name
#: tokens): ``evaljig-corpus conformance`` runs them only when asked (``--capability``, ``--faults``),
#: since a real provider that answers well fails them by design.
FAULT_CAPABILITIES = ("reasoning", "truncation", "broken_stream", "token_limits", "broken_tools")

__all__ = [
    "CONFORMANCE_CHECKS",
    "FAULT_CAPABILITIES",
    "assert_broken_stream_conformance",
    "assert_broken_tools_conformance",
    "assert_chat_conformance",
    "assert_completion_conformance",
    "assert_embed_conformance",
    "assert_json_object_conformance",
    "assert_loglikelihood_conformance",
    "assert_logprobs_conformance",
    "assert_models_conformance",
    "assert_multiturn_tools_conformance",
    "assert_nested_tools_conformance",
    "assert_reasoning_conformance",
    "assert_responses_stream_conformance",
    "assert_responses_tools_conformance",
    "assert_stream_conformance",
    "assert_structured_conformance",
    "assert_token_limits_conformance",
    "assert_tools_conformance",
    "assert_truncation_conformance",
]
