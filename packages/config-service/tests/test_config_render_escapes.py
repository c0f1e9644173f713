"""config.yaml reads back exactly what the Python path passes: every control character, every valid float."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaljig_config import LightEvalConfigRenderer, ProviderSpec

#: C0 controls, DEL, C1 controls (NEL among them), and the Unicode line and paragraph separators.
CONTROLS = [chr(c) for c in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, 0xFEFF)]
#: No time limit (a slow shared machine must not fail a property), no example database written to disk, and
#: the ``spec`` fixture shared by all examples (each example copies it, never changes it).
STEADY = settings(
    deadline=None,
    database=None,
    derandomize=True,
    max_examples=300,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def read_back(spec: ProviderSpec) -> dict[str, Any]:
    params = yaml.safe_load(LightEvalConfigRenderer(spec).render_yaml())["model_parameters"]
    assert isinstance(params, dict)
    return params


@pytest.mark.parametrize("control", CONTROLS, ids=lambda c: f"U+{ord(c):04X}")
@pytest.mark.parametrize("shape", ["a{}b", "{}", "{} lead", "trail {}", "x\n{}\ny", "{}{}"])
def test_every_control_in_a_system_prompt_reads_back_exactly(spec: ProviderSpec, control: str, shape: str) -> None:
    prompt = shape.format(control, control) if shape == "{}{}" else shape.format(control)
    spec = spec.model_copy(update={"system_prompt": prompt})
    assert read_back(spec)["system_prompt"] == prompt
    assert LightEvalConfigRenderer(spec).model_parameters()["system_prompt"] == prompt


def test_nel_is_escaped_not_written_raw(spec: ProviderSpec) -> None:
    text = LightEvalConfigRenderer(spec.model_copy(update={"system_prompt": "one\x85two"})).render_yaml()
    assert "\x85" not in text
    assert 'system_prompt: "one\\Ntwo"\n' in text


@STEADY
@given(prompt=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40))
def test_any_system_prompt_reads_back_exactly(spec: ProviderSpec, prompt: str) -> None:
    assert read_back(spec.model_copy(update={"system_prompt": prompt}))["system_prompt"] == prompt


@pytest.mark.parametrize(
    ("field", "value", "text"),
    [
        ("generation.temperature", 1e-05, "temperature: 0.00001\n"),
        ("generation.top_p", 1e-07, "top_p: 0.0000001\n"),
        ("retry.sleep", 5e-05, "api_retry_sleep: 0.00005\n"),
        ("timeout", 5e-324, "timeout: 0." + "0" * 323 + "5\n"),
    ],
)
def test_small_floats_render_positionally(spec: ProviderSpec, field: str, value: float, text: str) -> None:
    group, _, name = field.rpartition(".")
    if group:
        spec = spec.model_copy(update={group: getattr(spec, group).model_copy(update={name: value})})
    else:
        spec = spec.model_copy(update={name: value})
    rendered = LightEvalConfigRenderer(spec).render_yaml()
    assert text in rendered
    assert not re.search(r"\d[eE][-+]?\d", rendered)  # no exponent anywhere


def _floats(low: float, high: float, *, exclude_min: bool = False) -> st.SearchStrategy[float]:
    return st.floats(low, high, exclude_min=exclude_min, allow_nan=False, allow_infinity=False)


@STEADY
@given(
    temperature=_floats(0, 2),
    top_p=_floats(0, 1, exclude_min=True),
    presence=_floats(-2, 2),
    sleep=_floats(0, 600),
    multiplier=_floats(1, 10),
    timeout=_floats(0, 3600, exclude_min=True),
)
def test_every_valid_float_renders_and_reads_back_exactly(
    spec: ProviderSpec,
    temperature: float,
    top_p: float,
    presence: float,
    sleep: float,
    multiplier: float,
    timeout: float,
) -> None:
    generation = spec.generation.model_copy(
        update={"temperature": temperature, "top_p": top_p, "presence_penalty": presence}
    )
    retry = spec.retry.model_copy(update={"sleep": sleep, "multiplier": multiplier})
    spec = spec.model_copy(update={"generation": generation, "retry": retry, "timeout": timeout})
    first = LightEvalConfigRenderer(spec).render_yaml()
    assert LightEvalConfigRenderer(spec).render_yaml() == first  # deterministic
    params = yaml.safe_load(first)["model_parameters"]
    got = [
        params["generation_parameters"]["temperature"],
        params["generation_parameters"]["top_p"],
        params["generation_parameters"]["presence_penalty"],
        params["api_retry_sleep"],
        params["api_retry_multiplier"],
        params["timeout"],
    ]
    want = [temperature, top_p, presence, sleep, multiplier, timeout]
    assert all(isinstance(g, float) for g in got)
    assert got == want
    assert [math.copysign(1.0, g) for g in got] == [math.copysign(1.0, w) for w in want]  # -0.0 stays -0.0
