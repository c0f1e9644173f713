"""``LightEvalConfigRenderer``: one ``model_parameters`` mapping, rendered for both lighteval paths.

The CLI reads it as ``config.yaml``; the Python API receives it as ``LiteLLMModelConfig``.
Both come from :meth:`LightEvalConfigRenderer.model_parameters`, so they cannot disagree.
The API key is never rendered: the CLI runner hands it to litellm as ``OPENAI_API_KEY`` in
the subprocess environment and the Python runner passes it in memory.
"""

from __future__ import annotations

import logging
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml
from yaml.emitter import ScalarAnalysis

from evaljig_common import write_text_atomic
from evaljig_config._errors import ConfigError
from evaljig_config._lighteval_drift import LightEvalDrift, lighteval_drift
from evaljig_config._spec import ProviderSpec

#: lighteval 0.13 ``LiteLLMModelConfig`` keys (``extra="forbid"``), in its declaration order.
LIGHTEVAL_MODEL_KEYS: tuple[str, ...] = (
    "model_name",
    "provider",
    "base_url",
    "api_key",
    "concurrent_requests",
    "verbose",
    "max_model_length",
    "api_max_retry",
    "api_retry_sleep",
    "api_retry_multiplier",
    "timeout",
    "generation_parameters",
    "system_prompt",
    "cache_dir",
)
#: Relative, so it lands in each run's isolated working directory.
DEFAULT_CACHE_DIR = "lighteval_cache"
CONFIG_SUFFIX = ".yaml"
logger = logging.getLogger("evaljig_config")


#: Unicode line breaks of YAML 1.1 (NEL, LS, PS). With ``allow_unicode`` PyYAML's emitter writes NEL raw inside
#: quotes, where a reader folds it into a space; a string holding any of them is double-quoted and escaped.
_UNICODE_BREAKS = frozenset("\x85\u2028\u2029")


class _CanonicalDumper(yaml.SafeDumper):
    """Block style, no aliases, floats always positional with a decimal point, every string read back exactly."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def analyze_scalar(self, scalar: str) -> ScalarAnalysis:
        """A string holding NEL, LS or PS is double-quoted, where the emitter escapes them (``\\N``, ``\\L``...)."""
        analysis = super().analyze_scalar(scalar)
        if _UNICODE_BREAKS.isdisjoint(scalar):
            return analysis
        return ScalarAnalysis(
            scalar=scalar,
            empty=False,
            multiline=True,
            allow_flow_plain=False,
            allow_block_plain=False,
            allow_single_quoted=False,
            allow_double_quoted=True,
            allow_block=False,
        )


def canonical_float(value: float) -> str:
    """``value`` as a positional decimal with a point (``1e-05`` -> ``0.00001``), exactly what ``repr`` means.

    Never an exponent: PyYAML (YAML 1.1) reads ``1e-05`` as a string, not a float. The digits are
    ``repr``'s shortest round-trip digits, so the text is deterministic and reads back as ``value``.
    """
    if not math.isfinite(value):
        raise ConfigError(f"cannot render float {value!r}: not a finite number")
    text = format(Decimal(repr(value)), "f")
    return text if "." in text else f"{text}.0"


def _represent_float(dumper: yaml.SafeDumper, value: float) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:float", canonical_float(value))


_CanonicalDumper.add_representer(float, _represent_float)


class LightEvalConfigRenderer:
    """Renders a :class:`ProviderSpec` for lighteval 0.13."""

    def __init__(self, spec: ProviderSpec, *, cache_dir: str = DEFAULT_CACHE_DIR) -> None:
        self.spec = spec
        self.cache_dir = cache_dir

    def model_parameters(self) -> dict[str, Any]:
        """The single source of both paths, keys in lighteval's order, unset values left out."""
        spec = self.spec
        values: dict[str, Any] = {
            "model_name": spec.model,
            "provider": spec.provider,
            "base_url": spec.base_url,
            "concurrent_requests": spec.concurrency,
            "max_model_length": spec.max_model_length,
            "api_max_retry": spec.retry.attempts,
            "api_retry_sleep": float(spec.retry.sleep),
            "api_retry_multiplier": float(spec.retry.multiplier),
            "timeout": None if spec.timeout is None else float(spec.timeout),
            "generation_parameters": spec.generation.model_dump(exclude_none=True),
            "system_prompt": spec.system_prompt,
            "cache_dir": self.cache_dir,
        }
        ordered = {key: values[key] for key in LIGHTEVAL_MODEL_KEYS if values.get(key) is not None}
        unknown = set(ordered) - set(LIGHTEVAL_MODEL_KEYS)
        if unknown:  # pragma: no cover - guards future edits of this method
            raise ConfigError(f"keys lighteval would reject: {sorted(unknown)}")
        return ordered

    def render_yaml(self) -> str:
        """Canonical ``config.yaml`` text: fixed key order, stable numbers, UTF-8, trailing newline."""
        header = f"# lighteval endpoint litellm config for provider '{self.spec.name}', generated by evaljig-config.\n"
        body = yaml.dump(
            {"model_parameters": self.model_parameters()},
            Dumper=_CanonicalDumper,
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=1000,
        )
        return header + body

    def drift(self) -> list[LightEvalDrift]:
        """Where lighteval 0.13 will not send what this config says (its ``o1`` and reasoning rules)."""
        return lighteval_drift(self.spec)

    def write_config(self, path: Path) -> Path:
        """Write ``config.yaml`` atomically; lighteval only treats ``*.yaml`` paths as files.

        Each :meth:`drift` is logged as a warning (logger ``evaljig_config``): the file is right, the
        requests lighteval makes from it are not what it says.
        """
        check_config_path(path)
        write_text_atomic(path, self.render_yaml())
        for found in self.drift():
            logger.warning("%s: %s", path, found.message)
        return path

    def cli_argv(
        self,
        config_path: Path,
        tasks: str,
        *,
        custom_tasks: Path | None = None,
        output_dir: Path | None = None,
        max_samples: int | None = None,
        save_details: bool = True,
    ) -> list[str]:
        """``lighteval endpoint litellm CONFIG TASKS ...`` as an argv list."""
        check_config_path(config_path)
        if not tasks.strip():
            raise ConfigError("tasks: must name at least one task, e.g. 'mytask|0'")
        argv = ["lighteval", "endpoint", "litellm", str(config_path), tasks]
        if custom_tasks is not None:
            argv += ["--custom-tasks", str(custom_tasks)]
        if output_dir is not None:
            argv += ["--output-dir", str(output_dir)]
        if max_samples is not None:
            argv += ["--max-samples", str(max_samples)]
        if save_details:
            argv.append("--save-details")
        return argv

    def litellm_model_config(self, api_key: str | None = None) -> Any:
        """lighteval's ``LiteLLMModelConfig`` for the Python path (needs lighteval installed)."""
        from evaljig_config._lighteval_import import import_lighteval_module

        module = import_lighteval_module("lighteval.models.endpoints.litellm_model")
        params = self.model_parameters()
        return module.LiteLLMModelConfig(**params, api_key=api_key if api_key is not None else self.spec.api_key())


def check_config_path(path: Path) -> None:
    """lighteval parses any path not ending in ``.yaml`` as a ``k=v`` string and fails obscurely."""
    if path.suffix != CONFIG_SUFFIX:
        raise ConfigError(
            f"{path}: lighteval only reads config files ending in '{CONFIG_SUFFIX}' "
            f"(a '{path.suffix or 'suffix-less'}' path is parsed as 'key=value' arguments)"
        )
