"""evaljig-config: provider specs rendered for lighteval's CLI and Python API, plus LiteLLM calls.

lighteval itself is imported lazily, only by the runners and ``litellm_model_config()``.
"""

from evaljig_common import OFFLINE_ENV
from evaljig_common import write_bytes_atomic as write_bytes_atomic  # for evaljig_fixtures, until it imports common
from evaljig_common import write_text_atomic as write_text_atomic
from evaljig_config._config_renderer import LIGHTEVAL_MODEL_KEYS, LightEvalConfigRenderer, check_config_path
from evaljig_config._errors import ConfigError, LightEvalUnavailable, RetryBudgetExhausted
from evaljig_config._lighteval_import import lighteval_available
from evaljig_config._lighteval_runs import run_cli, run_python
from evaljig_config._litellm_caller import LiteLLMCaller
from evaljig_config._preload import SERVER_ENV as PRELOAD_SERVER_ENV
from evaljig_config._preload import serving as preload_server
from evaljig_config._run_result import LightEvalRun
from evaljig_config._spec import (
    GenerationParameters,
    ProviderSpec,
    RetryPolicy,
    load_provider_spec,
    parse_provider_spec,
)

LiteLLMFactory = LiteLLMCaller
"""Deprecated name of :class:`LiteLLMCaller` (it calls litellm; it never was a factory)."""
LightEvalConfigService = LightEvalConfigRenderer
"""Deprecated name of :class:`LightEvalConfigRenderer` (it renders; it serves nothing)."""

__all__ = [
    "LIGHTEVAL_MODEL_KEYS",
    "OFFLINE_ENV",
    "PRELOAD_SERVER_ENV",
    "ConfigError",
    "GenerationParameters",
    "LightEvalConfigRenderer",
    "LightEvalRun",
    "LightEvalUnavailable",
    "LiteLLMCaller",
    "ProviderSpec",
    "RetryBudgetExhausted",
    "RetryPolicy",
    "check_config_path",
    "lighteval_available",
    "load_provider_spec",
    "parse_provider_spec",
    "preload_server",
    "run_cli",
    "run_python",
]
