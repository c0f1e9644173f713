"""``ProviderSpec``: one provider + model, described once, rendered for every consumer.

The API key is named by its environment variable and read only when a request is made, so
spec files, generated configs, fixtures and goldens never contain a secret.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evaljig_common import credential_params
from evaljig_config._errors import ConfigError
from evaljig_config._spec_files import read_mapping

_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
OPENAI_COMPATIBLE_PREFIX = "openai/"
#: No model has a context anywhere near this; a bigger value is a typo.
MAX_MODEL_LENGTH_LIMIT = 10_000_000
#: ``strict``: ``concurrency: true`` or ``timeout: "30"`` is a mistake, not a number.
_STRICT = ConfigDict(extra="forbid", frozen=True, strict=True)


class GenerationParameters(BaseModel):
    """The subset of lighteval's ``GenerationParameters`` evaljig renders (all optional)."""

    model_config = _STRICT

    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    max_new_tokens: Annotated[int, Field(ge=1)] | None = None
    top_p: Annotated[float, Field(gt=0, le=1)] | None = None
    seed: int | None = None
    stop_tokens: list[str] | None = None
    presence_penalty: Annotated[float, Field(ge=-2, le=2)] | None = None
    frequency_penalty: Annotated[float, Field(ge=-2, le=2)] | None = None


class RetryPolicy(BaseModel):
    """lighteval's own retry loop: ``attempts`` tries, sleeping ``sleep * multiplier**i``."""

    model_config = _STRICT

    attempts: Annotated[int, Field(ge=1, le=100)] = 8
    sleep: Annotated[float, Field(ge=0, le=600)] = 1.0
    multiplier: Annotated[float, Field(ge=1, le=10)] = 2.0


class ProviderSpec(BaseModel):
    """A provider and model as evaljig users write them (JSON or YAML)."""

    model_config = _STRICT

    name: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
    base_url: str
    model: Annotated[str, Field(min_length=1)]
    api_key_env: str
    generation: GenerationParameters = GenerationParameters()
    retry: RetryPolicy = RetryPolicy()
    timeout: Annotated[float, Field(gt=0, le=3600)] | None = None
    concurrency: Annotated[int, Field(ge=1, le=1024)] = 1
    max_model_length: Annotated[int, Field(ge=1, le=MAX_MODEL_LENGTH_LIMIT)] | None = None
    """Set it for non-public models: otherwise litellm asks the network for the context size."""
    system_prompt: str | None = None
    provider: Literal["openai"] = "openai"

    @model_validator(mode="before")
    @classmethod
    def _no_literal_key(cls, data: Any) -> Any:
        if isinstance(data, dict) and "api_key" in data:
            raise ValueError(
                "a literal 'api_key' is not allowed in a provider spec; "
                "name the environment variable that holds it with 'api_key_env'"
            )
        return data

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return check_base_url(value)

    @field_validator("model")
    @classmethod
    def _printable_model(cls, value: str) -> str:
        if not value.isprintable() or value != value.strip():
            raise ValueError("must be printable, without NUL, newline or surrounding spaces")
        return value

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str) -> str:
        if not _ENV_NAME.match(value):
            raise ValueError("must be an environment variable name such as OPENAI_API_KEY")
        return value

    @model_validator(mode="after")
    def _openai_prefix(self) -> ProviderSpec:
        if not self.model.startswith(OPENAI_COMPATIBLE_PREFIX):
            raise ValueError(
                f"model '{self.model}' needs the '{OPENAI_COMPATIBLE_PREFIX}' prefix for an OpenAI-compatible "
                f"base_url (litellm refuses the call otherwise): use '{OPENAI_COMPATIBLE_PREFIX}{self.model}'"
            )
        return self

    @property
    def served_model(self) -> str:
        """The model name the server receives (litellm strips the provider prefix)."""
        return self.model.removeprefix(OPENAI_COMPATIBLE_PREFIX)

    def api_key(self) -> str:
        """The key from the environment; a clear error if it is unset."""
        value = os.environ.get(self.api_key_env)
        if not value:
            raise ConfigError(f"provider '{self.name}': environment variable {self.api_key_env} is not set")
        return value

    def with_base_url(self, base_url: str) -> ProviderSpec:
        """A copy pointing at another server (tests start ephemeral gateways); raises ``ConfigError``."""
        return parse_provider_spec(
            {**self.model_dump(), "base_url": base_url}, source=f"{self.name} (base_url override)"
        )

    def with_model(self, model: str) -> ProviderSpec:
        """A copy for another model of the same provider; raises ``ConfigError``."""
        return parse_provider_spec({**self.model_dump(), "model": model}, source=f"{self.name} (model override)")


def check_base_url(value: str) -> str:
    """An http(s) URL without spaces or credentials; the message never echoes the URL (it may hold a key)."""
    if not value.isprintable() or any(ch.isspace() for ch in value):
        raise ValueError("must not contain spaces or control characters")
    try:
        parts = urllib.parse.urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        raise ValueError("is not a valid URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http:// or https:// URL")
    if "@" in parts.netloc:
        raise ValueError(
            "must not carry credentials (user:password@host); name the key's environment variable in 'api_key_env'"
        )
    secret_params = credential_params(parts.query)  # evaljig-common's list: the cassette writer refuses the same
    if secret_params:
        raise ValueError(
            f"must not carry credentials (query parameter {', '.join(secret_params)}); "
            "name the key's environment variable in 'api_key_env'"
        )
    return value.rstrip("/")


def load_provider_spec(path: Path) -> ProviderSpec:
    """Load a spec from ``.json``, ``.yaml`` or ``.yml``; errors name the file, field and reason."""
    return parse_provider_spec(read_mapping(path), source=str(path))


def parse_provider_spec(data: dict[str, Any], source: str = "<spec>") -> ProviderSpec:
    """Validate a mapping; errors name ``source``, the field and the reason, never the value."""
    problems = []
    try:
        return ProviderSpec.model_validate(data)
    except ValidationError as exc:  # it holds the input: raised outside this block, so not even as __context__
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"]) or "(spec)"
            problems.append(f"{source}: field '{field}': {err['msg'].removeprefix('Value error, ')}")
    raise ConfigError("\n".join(problems))
