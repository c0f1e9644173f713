"""``LiteLLMCaller``: litellm call arguments from a spec, and ``complete()`` with an explicit budget.

litellm hands OpenAI-compatible calls to the OpenAI SDK, which retries 5xx/429/connection
errors twice on its own. ``complete()`` sets the SDK's ``max_retries`` to 0 so that the
budget is exact: ``spec.retry.attempts`` attempts means that many HTTP requests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from evaljig_config._errors import RetryBudgetExhausted
from evaljig_config._spec import ProviderSpec

Message = dict[str, Any]


class LiteLLMCaller:
    """Builds litellm calls for one provider spec."""

    def __init__(self, spec: ProviderSpec, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.spec = spec
        self._sleep = sleep

    def completion_kwargs(self, messages: Sequence[Message], **overrides: Any) -> dict[str, Any]:
        """Arguments for ``litellm.completion`` (the key is read from the environment now)."""
        spec, gen = self.spec, self.spec.generation
        if spec.system_prompt and not any(m.get("role") == "system" for m in messages):
            messages = [{"role": "system", "content": spec.system_prompt}, *messages]
        kwargs: dict[str, Any] = {
            "model": spec.model,
            "messages": list(messages),
            "base_url": spec.base_url,
            "api_key": spec.api_key(),
            "timeout": spec.timeout,
            "max_retries": 0,
            "temperature": gen.temperature,
            "top_p": gen.top_p,
            "seed": gen.seed,
            "stop": gen.stop_tokens,
            "max_tokens": gen.max_new_tokens,
            "presence_penalty": gen.presence_penalty,
            "frequency_penalty": gen.frequency_penalty,
        }
        kwargs.update(overrides)
        return {k: v for k, v in kwargs.items() if v is not None}

    def complete(self, messages: Sequence[Message], **overrides: Any) -> Any:
        """``litellm.completion`` under the spec's retry budget; empty answers count as failures.

        Raises :class:`RetryBudgetExhausted` naming model, attempts and the last error. Errors
        that no retry can fix (400, 401, 403, 404) are raised at once, unchanged.
        """
        import litellm
        from litellm.exceptions import AuthenticationError, BadRequestError, NotFoundError, PermissionDeniedError

        permanent = (BadRequestError, AuthenticationError, PermissionDeniedError, NotFoundError)
        kwargs = self.completion_kwargs(messages, **overrides)
        policy = self.spec.retry
        last_error = "no attempt made"
        for attempt in range(policy.attempts):
            try:
                response = litellm.completion(**kwargs)
                choices = getattr(response, "choices", None) or []
                message = getattr(choices[0], "message", None) if choices else None
                if message is not None and (message.content or getattr(message, "tool_calls", None)):
                    return response
                last_error = "empty response"
            except permanent:
                raise
            except Exception as exc:  # litellm maps every provider error onto its own types
                last_error = f"{type(exc).__name__}: {exc}"
            if attempt + 1 < policy.attempts:
                self._sleep(policy.sleep * policy.multiplier**attempt)
        raise RetryBudgetExhausted(self.spec.model, policy.attempts, last_error)
