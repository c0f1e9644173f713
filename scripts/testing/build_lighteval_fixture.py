"""Rebuild evaljig's own fixtures/ byte-for-byte, through the public factories a team's build script uses.

Shaped like the script `evaljig init` scaffolds: it declares ``BUILDERS`` and calls ``regen_main``,
so ``make regen`` (``nox -s regen``: this script in the lighteval stack) exercises what teams run.

Run from the repository root:  python scripts/testing/build_lighteval_fixture.py [--check] [--only NAME ...] [--list]

The datasets' rows are the sample rows ``evaljig init`` ships (``evaljig_fixtures/data/scaffold/``);
what each package says about them (name, task, description, accuracy, claimed scripts) is its
``DatasetSource`` below. Cassettes
are recorded through a recording gateway (``Gateway(tape=Record(...))``, the secret scan teams get)
from an ephemeral gateway answering from the dataset's answer key; a recorded cassette is kept
until you delete it (or record with ``--upstream``), so ``make regen`` never changes it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from evaljig_common import CANONICAL_BASE_URL
from evaljig_config import LiteLLMCaller, load_provider_spec
from evaljig_fixtures import (
    BuildContext,
    Builder,
    DatasetSource,
    cassette_builder,
    cli_stdout_golden_builder,
    config_golden_builder,
    dataset_package_builder,
    provider_builder,
    regen_main,
)
from evaljig_gateway import Gateway, Record

ROOT = Path(__file__).resolve().parents[2]  # the repository
#: The rows: the sample questions `evaljig init` gives teams are these datasets' rows.
DATA = ROOT / "packages" / "fixture-builder" / "src" / "evaljig_fixtures" / "data" / "scaffold"
FIXTURES = ROOT / "fixtures"

PROVIDER = "providers/fake-openai.json"
MINI_MMLU = "datasets/mini-mmlu.eval752.zip"
CALLER_CASSETTE = "cassettes/litellm-caller.yaml"
#: The key litellm sends while recording (the recording gateway scans the cassette for it). Never a real one.
RECORDING_KEY = "sk-evaljig-recording-0000"

#: The provider as lighteval's litellm backend sees it; tests point base_url at their local gateway.
PROVIDER_SPEC = {
    "name": "fake-openai",
    "base_url": CANONICAL_BASE_URL,
    "model": "openai/gpt-stub",
    "api_key_env": "EVALJIG_FAKE_API_KEY",
    "generation": {"temperature": 0.0, "max_new_tokens": 8, "seed": 0},
    "retry": {"attempts": 3, "sleep": 0.01, "multiplier": 1.0},
    "timeout": 30.0,
    "concurrency": 1,
}

MINI_MMLU_SOURCE = DatasetSource(
    DATA / "mini-mmlu.jsonl",
    name="mini-mmlu",
    description="MMLU-style four-choice questions written for evaljig (public-domain facts), 7 subjects.",
    accuracy=0.7,
)
POLYGLOT_SOURCE = DatasetSource(
    DATA / "polyglot.jsonl",
    name="polyglot",
    description="Four-choice questions in many scripts; code points are kept exactly (never NFC-normalized).",
    accuracy=0.7,
    scripts=(
        "Latin", "Cyrillic", "Greek", "Arabic", "Hebrew", "Devanagari", "Han", "Hiragana", "Katakana", "Hangul",
        "Thai", "Emoji",
    ),
    features=("combining-marks", "zwj-sequences"),
)  # fmt: skip

#: What ``LiteLLMCaller.complete()`` sends in the caller cassette: (model, prompt).
CALLER_PROMPTS = (
    ("gpt-stub", "What is the capital of France?"),
    ("gpt-stub", "Name a prime number."),
)


def record_caller(out_dir: Path, ctx: BuildContext) -> list[Path]:
    """``LiteLLMCaller.complete()`` through a recording gateway, its upstream an ephemeral gateway."""
    spec = load_provider_spec(ctx.input(PROVIDER))
    out = out_dir / CALLER_CASSETTE
    os.environ[spec.api_key_env] = RECORDING_KEY  # regen runs each builder in a child process of its own
    with Gateway() as upstream, Gateway(tape=Record(out, upstream=upstream.base_url)) as recorder:
        for model, prompt in CALLER_PROMPTS:
            caller = LiteLLMCaller(spec.with_base_url(recorder.base_url).with_model(f"openai/{model}"))
            caller.complete([{"role": "user", "content": prompt}])
    return [out]  # the recorder wrote it when it stopped, after the secret scan


BUILDERS = [
    provider_builder(PROVIDER, PROVIDER_SPEC, name="providers"),
    dataset_package_builder(MINI_MMLU, MINI_MMLU_SOURCE, builder_name="mini-mmlu"),
    dataset_package_builder("datasets/polyglot.eval752.zip", POLYGLOT_SOURCE, builder_name="polyglot"),
    config_golden_builder("configs/expected-config.yaml", provider=PROVIDER),
    Builder(
        name="caller-cassette", outputs=(CALLER_CASSETTE,), build=record_caller,
        description="LiteLLMCaller traffic, recorded through a recording gateway",
    ),
    # the cassette first: when it records (a first build), the CLI golden reuses that run's table
    cassette_builder("cassettes/mini-mmlu.yaml", provider=PROVIDER, dataset=MINI_MMLU, name="cassette"),
    cli_stdout_golden_builder("configs/expected-cli-stdout.txt", provider=PROVIDER, dataset=MINI_MMLU),
]  # fmt: skip

if __name__ == "__main__":
    raise SystemExit(regen_main(BUILDERS, sys.argv[1:], fixtures=FIXTURES))
