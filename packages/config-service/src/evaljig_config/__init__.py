"""evaljig-config: provider specs rendered for lighteval's CLI and Python API, plus LiteLLM calls.

lighteval itself is imported lazily, only by the runners and ``litellm_model_config()``.
"""

from evaljig_config._config_renderer import LIGHTEVAL_MODEL_KEYS, LightEvalConfigRenderer, check_config_path
from evaljig_config._errors import (
    ConfigError,
    EmptyAnswers,
    InfrastructureError,
    LightEvalUnavailable,
    RetryBudgetExhausted,
)
from evaljig_config._lighteval_drift import LightEvalDrift, lighteval_drift
from evaljig_config._lighteval_import import lighteval_available
from evaljig_config._lighteval_runs import run_cli, run_python
from evaljig_config._lighteval_setup import (
    StackProblem,
    check_lighteval_stack,
    lighteval_run_env,
    prepare_lighteval,
    prepare_run_dir,
)
from evaljig_config._litellm_caller import LiteLLMCaller
from evaljig_config._run_result import LightEvalRun
from evaljig_config._scrub import scrub_text, secret_forms
from evaljig_config._spec import (
    GenerationParameters,
    ProviderSpec,
    RetryPolicy,
    load_provider_spec,
    parse_provider_spec,
)
from evaljig_config._stack_bounds import (
    LIGHTEVAL_EXTRA,
    LIGHTEVAL_STACK,
    RESOLVER_HINTS,
    STACK_BOUNDS,
    StackBound,
    VersionMismatch,
    check_stack_versions,
)

__all__ = [
    "LIGHTEVAL_EXTRA",
    "LIGHTEVAL_MODEL_KEYS",
    "LIGHTEVAL_STACK",
    "RESOLVER_HINTS",
    "STACK_BOUNDS",
    "ConfigError",
    "EmptyAnswers",
    "GenerationParameters",
    "InfrastructureError",
    "LightEvalConfigRenderer",
    "LightEvalDrift",
    "LightEvalRun",
    "LightEvalUnavailable",
    "LiteLLMCaller",
    "ProviderSpec",
    "RetryBudgetExhausted",
    "RetryPolicy",
    "StackBound",
    "StackProblem",
    "VersionMismatch",
    "check_config_path",
    "check_lighteval_stack",
    "check_stack_versions",
    "lighteval_available",
    "lighteval_drift",
    "lighteval_run_env",
    "load_provider_spec",
    "parse_provider_spec",
    "prepare_lighteval",
    "prepare_run_dir",
    "run_cli",
    "run_python",
    "scrub_text",
    "secret_forms",
]
