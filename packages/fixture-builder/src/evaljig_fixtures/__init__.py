"""evaljig-fixtures: the capability fixture corpus for OpenAI-compatible providers, and its conformance helpers.

One packaged corpus of canonical inputs (a valid baseline and named invalid inputs per
capability) so conformance tests, eval suites and provider authors stop hand-rolling payloads;
``assert_<capability>_conformance(target, **fixture.kwargs())`` checks a target's answer.
"""

from evaljig_fixtures.conformance import (
    CONFORMANCE_CHECKS,
    assert_chat_conformance,
    assert_completion_conformance,
    assert_embed_conformance,
    assert_logprobs_conformance,
    assert_models_conformance,
    assert_stream_conformance,
    assert_tools_conformance,
)
from evaljig_fixtures.corpus import (
    CAPABILITY_FIXTURE_NAMES,
    FIXTURE_NAMES,
    iter_all_fixtures,
    iter_capability_fixtures,
    list_fixture_names,
    load_capability_fixture,
    validate_corpus,
)
from evaljig_fixtures.datasets import DatasetPackage, load_dataset_package
from evaljig_fixtures.errors import ConformanceError, DatasetPackageError, EvaljigFixturesError, FixtureError
from evaljig_fixtures.fixture import CAPABILITIES, DATA_CLASSES, FIXTURE_SCHEMA_VERSION, CapabilityFixture
from evaljig_fixtures.runner import CHAT_PLACEHOLDER, EMBED_PLACEHOLDER, Outcome, render_table, run_corpus
from evaljig_fixtures.transport import Target, configured_client

__all__ = [
    "CAPABILITIES",
    "CAPABILITY_FIXTURE_NAMES",
    "CHAT_PLACEHOLDER",
    "CONFORMANCE_CHECKS",
    "DATA_CLASSES",
    "EMBED_PLACEHOLDER",
    "FIXTURE_NAMES",
    "FIXTURE_SCHEMA_VERSION",
    "CapabilityFixture",
    "ConformanceError",
    "DatasetPackage",
    "DatasetPackageError",
    "EvaljigFixturesError",
    "FixtureError",
    "Outcome",
    "Target",
    "assert_chat_conformance",
    "assert_completion_conformance",
    "assert_embed_conformance",
    "assert_logprobs_conformance",
    "assert_models_conformance",
    "assert_stream_conformance",
    "assert_tools_conformance",
    "configured_client",
    "iter_all_fixtures",
    "iter_capability_fixtures",
    "list_fixture_names",
    "load_capability_fixture",
    "load_dataset_package",
    "render_table",
    "run_corpus",
    "validate_corpus",
]
