"""Where lighteval 0.13 does not send what the rendered config says: its model-name rules, as warnings.

lighteval's LiteLLM path (``models/endpoints/litellm_model.py``) changes the request by the model's
name, after the config is read, so a config can be right and the eval still run with other
parameters:

* the ``o1`` rule: when the model name *contains* ``o1`` (``openai/o1``, but also any alias
  such as ``my-proto1-model``), none of the generation parameters is sent (no temperature, seed,
  top_p, stop, penalties) and ``max_completion_tokens`` is the task's generation size instead of
  ``generation.max_new_tokens``;
* the reasoning rule: when litellm says the model reasons (``litellm.supports_reasoning``), the
  task's generation size is multiplied by 10 (capped at ``max_model_length``) as ``max_tokens``,
  and as ``max_completion_tokens`` unless ``generation.max_new_tokens`` sets that (measured:
  litellm then sends ``max_completion_tokens`` alone, so the spec's value wins);
* ``presence_penalty`` is never sent (lighteval's ``to_litellm_dict`` leaves it out).

The LEV matrix (LEV-011) pins what actually reaches the server.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from typing import Any

from evaljig_config._spec import ProviderSpec

#: ``generation`` field -> the litellm argument lighteval 0.13's ``to_litellm_dict`` sends it as.
SENT_AS: dict[str, str] = {
    "max_new_tokens": "max_completion_tokens",
    "stop_tokens": "stop",
    "temperature": "temperature",
    "top_p": "top_p",
    "seed": "seed",
    "frequency_penalty": "frequency_penalty",
}
NEVER_SENT = ("presence_penalty",)
REASONING_FACTOR = 10


@dataclass(frozen=True)
class LightEvalDrift:
    """One lighteval rule that changes what the rendered config asks for."""

    rule: str
    """``o1``, ``reasoning`` or ``never-sent``."""
    parameters: tuple[str, ...]
    """The ``generation`` fields (or the request field) the rule drops or changes."""
    message: str

    def line(self) -> str:
        return self.message


def supports_reasoning(model: str) -> bool:
    """litellm's own answer, as lighteval asks it; litellm's bundled model map, never a download."""
    if "litellm" not in sys.modules:
        saved = os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP")
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # litellm reads it once, at import
        try:
            importlib.import_module("litellm")
        finally:
            if saved is None:
                os.environ.pop("LITELLM_LOCAL_MODEL_COST_MAP", None)
            else:
                os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = saved
    litellm: Any = sys.modules["litellm"]
    try:
        return bool(litellm.supports_reasoning(model))
    except Exception:  # litellm cannot place the model: lighteval's call would say False too
        return False


def lighteval_drift(spec: ProviderSpec) -> list[LightEvalDrift]:
    """The rules of lighteval 0.13 that apply to ``spec``, in the order lighteval applies them."""
    model, generation = spec.model, spec.generation.model_dump(exclude_none=True)
    found: list[LightEvalDrift] = []
    if supports_reasoning(model):
        cap = spec.max_model_length if spec.max_model_length is not None else "the model's context length"
        kept = "max_new_tokens" in generation and "o1" not in model  # sent as max_completion_tokens, which wins
        tail = (
            "; generation.max_new_tokens is still sent as max_completion_tokens, the limit litellm keeps"
            if kept
            else "; max_completion_tokens is that same 10x size"
        )
        found.append(
            LightEvalDrift(
                "reasoning",
                ("max_tokens",) if kept else ("max_tokens", "max_completion_tokens"),
                f"model '{model}': litellm says it reasons, so lighteval 0.13 asks max_tokens = {REASONING_FACTOR} x "
                f"the task's generation size (capped at {cap}){tail}",
            )
        )
    if "o1" in model:
        dropped = tuple(name for name in SENT_AS if name in generation)
        what = ", ".join(f"{name} (sent as {SENT_AS[name]})" for name in dropped) or "none set here"
        found.append(
            LightEvalDrift(
                "o1",
                dropped,
                f"model '{model}': its name contains 'o1', so lighteval 0.13 sends none of the generation parameters: "
                f"{what} dropped; max_completion_tokens is the task's generation size (x{REASONING_FACTOR} for a "
                "reasoning model); fix: serve the model under a name without 'o1' if those parameters must reach it",
            )
        )
    ignored = tuple(name for name in NEVER_SENT if name in generation)
    if ignored:
        fields = ", ".join(f"generation.{name}" for name in ignored)
        message = (
            f"model '{model}': lighteval 0.13's LiteLLM path never sends {fields}; "
            "fix: remove it from the spec's generation block (it has no effect on the run)"
        )
        found.append(LightEvalDrift("never-sent", ignored, message))
    return found
