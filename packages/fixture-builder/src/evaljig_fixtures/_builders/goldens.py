"""Goldens produced by running the real thing: the config, lighteval's CLI stdout, cassettes.

``expected-config.yaml`` only needs the config service. The others start an ephemeral
gateway loaded with the dataset's answer key (so scores are meaningful) and run litellm or
the real lighteval; the lighteval ones are skipped where lighteval is not installed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from evaljig_common import write_text_atomic
from evaljig_config import (
    LightEvalConfigRenderer,
    LiteLLMCaller,
    ProviderSpec,
    load_provider_spec,
    run_cli,
    run_python,
)
from evaljig_fixtures._cassettes import recording
from evaljig_fixtures._datasets import load_dataset_package
from evaljig_fixtures._regen.builder import Builder
from evaljig_fixtures._regen.context import BuildContext
from evaljig_gateway import Gateway

PROVIDER = "providers/fake-openai.json"
CONFIG = "configs/expected-config.yaml"
CLI_STDOUT = "configs/expected-cli-stdout.txt"
CALLER_CASSETTE = "cassettes/litellm-caller.yaml"
PYTHON_PATH_CASSETTE = "cassettes/python-path-mini-mmlu.yaml"
MINI_MMLU = "datasets/mini-mmlu.eval752.zip"
MINI_MMLU_TASK = "mini_mmlu|0"
#: The placeholder key used while recording; the gateway ignores keys. Never a real credential.
RECORDING_KEY = "sk-evaljig-recording-0000"
CALLER_PROMPTS = (
    ("gpt-stub", "What is the capital of France?"),
    ("fail-once", "Name a prime number."),
)


def provider(ctx: BuildContext) -> ProviderSpec:
    return load_provider_spec(ctx.input(PROVIDER))


def build_config(out_dir: Path, ctx: BuildContext) -> list[Path]:
    """``configs/expected-config.yaml``: the provider fixture rendered by the config service."""
    out = out_dir / CONFIG
    write_text_atomic(out, LightEvalConfigRenderer(provider(ctx)).render_yaml())
    return [out]


def build_caller_cassette(out_dir: Path, ctx: BuildContext) -> list[Path]:
    """``cassettes/litellm-caller.yaml``: ``LiteLLMCaller.complete()`` on a healthy and a fail-once model."""
    spec = provider(ctx)
    out = out_dir / CALLER_CASSETTE
    with placeholder_key(spec), Gateway() as gw, recording(out, gw.base_url, secret=RECORDING_KEY):
        for model, prompt in CALLER_PROMPTS:
            caller = LiteLLMCaller(spec.with_base_url(gw.base_url).with_model(f"openai/{model}"), sleep=_no_sleep)
            caller.complete([{"role": "user", "content": prompt}])
    return [out]


def build_lighteval_goldens(out_dir: Path, ctx: BuildContext) -> list[Path]:
    """The real lighteval on mini-mmlu: CLI stdout golden and the Python path's cassette."""
    spec = provider(ctx)
    package = load_dataset_package(ctx.input(MINI_MMLU))
    stdout_out, cassette_out = out_dir / CLI_STDOUT, out_dir / PYTHON_PATH_CASSETTE
    with tempfile.TemporaryDirectory() as tmp, placeholder_key(spec), Gateway(answers=dict(package.answer_key)) as gw:
        work = Path(tmp)
        package.extract_to(work / "task")
        module = work / "task" / "mini_mmlu.py"
        live = spec.with_base_url(gw.base_url)
        cli = run_cli(live, MINI_MMLU_TASK, custom_tasks=module, run_dir=work / "cli")
        write_text_atomic(stdout_out, cli.stdout_table)
        gw.reset()
        with recording(cassette_out, gw.base_url, secret=RECORDING_KEY):
            run_python(live, MINI_MMLU_TASK, custom_tasks=module, run_dir=work / "python")
    return [stdout_out, cassette_out]


def _no_sleep(seconds: float) -> None:
    """Recording needs no back-off: the gateway's failures are scheduled, not load-driven."""


@contextlib.contextmanager
def placeholder_key(spec: ProviderSpec) -> Iterator[None]:
    """The recording placeholder key in the spec's environment variable, for the block only."""
    saved = os.environ.get(spec.api_key_env)
    os.environ[spec.api_key_env] = RECORDING_KEY
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(spec.api_key_env, None)
        else:
            os.environ[spec.api_key_env] = saved


CONFIG_GOLDEN = Builder(
    name="config-golden",
    outputs=(CONFIG,),
    build=build_config,
    description="the provider fixture rendered as lighteval config.yaml",
)
CALLER_CASSETTES = Builder(
    name="caller-cassette",
    outputs=(CALLER_CASSETTE,),
    build=build_caller_cassette,
    description="LiteLLMCaller traffic against an ephemeral gateway",
)
LIGHTEVAL_GOLDENS = Builder(
    name="lighteval-goldens",
    outputs=(CLI_STDOUT, PYTHON_PATH_CASSETTE),
    build=build_lighteval_goldens,
    requires=frozenset({"lighteval"}),
    description="real lighteval CLI stdout and the Python path's cassette on mini-mmlu",
)
