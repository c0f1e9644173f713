"""evaljig-config: provider specs rendered for lighteval's CLI and Python API, plus LiteLLM calls.

lighteval itself is imported lazily, only by the runners and ``litellm_model_config()``.
"""

from evaljig_config.atomic import write_bytes_atomic, write_text_atomic
from evaljig_config.errors import ConfigError, LightEvalUnavailable, RetryBudgetExhausted
from evaljig_config.factory import LiteLLMFactory
from evaljig_config.lighteval_import import lighteval_available
from evaljig_config.offline import OFFLINE_ENV
from evaljig_config.run_result import LightEvalRun
from evaljig_config.runners import run_cli, run_python
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
    "OFFLINE_ENV",
    "ConfigError",
    "GenerationParameters",
    "LightEvalConfigService",
    "LightEvalRun",
    "LightEvalUnavailable",
    "LiteLLMFactory",
    "ProviderSpec",
    "RetryBudgetExhausted",
    "RetryPolicy",
    "check_config_path",
    "lighteval_available",
    "load_provider_spec",
    "parse_provider_spec",
    "run_cli",
    "run_python",
    "write_bytes_atomic",
    "write_text_atomic",
]
