"""The config service's exception types."""

from __future__ import annotations

from evaljig_common import EvaljigError


class ConfigError(EvaljigError, ValueError):
    """A provider spec or config request that cannot be used; names file, field and reason."""


class InfrastructureError(EvaljigError, RuntimeError):
    """The run did not measure the model: lighteval scored answers that never came (reported as an
    infrastructure error, never as wrong answers). lighteval itself exits 0 with every such answer scored 0."""


class RetryBudgetExhausted(InfrastructureError):  # noqa: N818 - the name is the contract
    """Every attempt of the retry budget failed (or came back empty)."""

    def __init__(self, model: str, attempts: int, last_error: str) -> None:
        self.model = model
        self.attempts = attempts
        self.last_error = last_error
        super().__init__(f"model '{model}': retry budget of {attempts} attempt(s) exhausted; last error: {last_error}")


class LightEvalUnavailable(EvaljigError, RuntimeError):  # noqa: N818
    """lighteval is not importable in this environment."""


class EmptyAnswers(InfrastructureError):  # noqa: N818 - the name says what came back
    """Answers came back empty with a 200: lighteval reads only ``message.content``, calls once more
    without its cache, and scores the empty answer 0 (a reasoning model that spent everything on
    ``reasoning_content`` is the usual cause)."""

    def __init__(self, model: str, empty: int, answers: int, reasoning_only: int) -> None:
        self.model = model
        self.empty = empty
        self.answers = answers
        self.reasoning_only = reasoning_only
        cause = (
            f"{reasoning_only} of them carried only reasoning: the model spent its tokens thinking; "
            if reasoning_only
            else ""
        )
        super().__init__(
            f"model '{model}': {empty} of {answers} answer(s) came back empty and lighteval scored them 0 "
            f"(an infrastructure error, not wrong answers); {cause}lighteval reads only message.content; "
            "fix: give the model room to answer (generation.max_new_tokens), turn its reasoning off, "
            "or evaluate a model that answers in content"
        )
