"""evaljig-corpus: the capability fixture corpus for OpenAI-compatible providers, its loader and conformance checks.

One packaged corpus of canonical inputs (a valid baseline and named invalid inputs per
capability) so conformance tests, eval suites and provider authors stop hand-rolling payloads;
``assert_<capability>_conformance(target, **fixture.kwargs())`` checks a target's answer.
Importing it needs httpx and jsonschema and nothing heavier.
"""

from evaljig_corpus._conformance import (
    CONFORMANCE_CHECKS,
    FAULT_CAPABILITIES,
    assert_broken_stream_conformance,
    assert_broken_tools_conformance,
    assert_chat_conformance,
    assert_completion_conformance,
    assert_embed_conformance,
    assert_json_object_conformance,
    assert_loglikelihood_conformance,
    assert_logprobs_conformance,
    assert_models_conformance,
    assert_multiturn_tools_conformance,
    assert_nested_tools_conformance,
    assert_reasoning_conformance,
    assert_responses_stream_conformance,
    assert_responses_tools_conformance,
    assert_stream_conformance,
    assert_structured_conformance,
    assert_token_limits_conformance,
    assert_tools_conformance,
    assert_truncation_conformance,
)
from evaljig_corpus._corpus_run import FixtureVerdict, run_corpus
from evaljig_corpus._errors import ConformanceError, EvaljigCorpusError, FixtureError
from evaljig_corpus._fixture import CAPABILITIES, DATA_CLASSES, FIXTURE_SCHEMA_VERSION, CapabilityFixture
from evaljig_corpus._loader import (
    CAPABILITY_FIXTURE_NAMES,
    FIXTURE_NAMES,
    corpus_root,
    iter_all_fixtures,
    iter_capability_fixtures,
    list_fixture_names,
    load_capability_fixture,
    validate_corpus,
)
from evaljig_corpus._transport import Target, configured_client

__all__ = [
    "CAPABILITIES",
    "CAPABILITY_FIXTURE_NAMES",
    "CONFORMANCE_CHECKS",
    "DATA_CLASSES",
    "FAULT_CAPABILITIES",
    "FIXTURE_NAMES",
    "FIXTURE_SCHEMA_VERSION",
    "CapabilityFixture",
    "ConformanceError",
    "EvaljigCorpusError",
    "FixtureError",
    "FixtureVerdict",
    "Target",
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
    "configured_client",
    "corpus_root",
    "iter_all_fixtures",
    "iter_capability_fixtures",
    "list_fixture_names",
    "load_capability_fixture",
    "run_corpus",
    "validate_corpus",
]
