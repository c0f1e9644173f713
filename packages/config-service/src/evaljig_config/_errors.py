"""The config service's exception types."""

from __future__ import annotations

from evaljig_common import EvaljigError


class ConfigError(EvaljigError, ValueError):
    """A provider spec or config request that cannot be used; names file, field and reason."""


class RetryBudgetExhausted(EvaljigError, RuntimeError):  # noqa: N818 - the name is the contract
    """Every attempt of the retry budget failed (or came back empty)."""

    def __init__(self, model: str, attempts: int, last_error: str) -> None:
        self.model = model
        self.attempts = attempts
        self.last_error = last_error
        super().__init__(f"model '{model}': retry budget of {attempts} attempt(s) exhausted; last error: {last_error}")


class LightEvalUnavailable(EvaljigError, RuntimeError):  # noqa: N818
    """lighteval is not importable in this environment."""
