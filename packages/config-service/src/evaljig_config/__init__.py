"""evaljig-config: provider specs rendered for lighteval's CLI and Python API, plus LiteLLM calls.

lighteval itself is imported lazily, only by the runners and ``litellm_model_config()``.
"""

from evaljig_config.errors import ConfigError, LightEvalUnavailable, RetryBudgetExhausted
from evaljig_config.factory import LiteLLMFactory
from evaljig_config.lighteval_import import lighteval_available
from evaljig_config.service import LIGHTEVAL_MODEL_KEYS, LightEvalConfigService, check_config_path
from evaljig_config.spec import (
    GenerationParameters,
    ProviderSpec,
    RetryPolicy,
    load_provider_spec,
    parse_provider_spec,
)

__all__ = [
    "LIGHTEVAL_MODEL_KEYS",
    "ConfigError",
    "GenerationParameters",
    "LightEvalConfigService",
    "LightEvalUnavailable",
    "LiteLLMFactory",
    "ProviderSpec",
    "RetryBudgetExhausted",
    "RetryPolicy",
    "check_config_path",
    "lighteval_available",
    "load_provider_spec",
    "parse_provider_spec",
]
