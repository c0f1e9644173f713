"""``ProviderSpec``: one provider + model, described once, rendered for every consumer.

The API key is named by its environment variable and read only when a request is made, so
spec files, generated configs, fixtures and goldens never contain a secret.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evaljig_config.errors import ConfigError

_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
OPENAI_COMPATIBLE_PREFIX = "openai/"


class GenerationParameters(BaseModel):
    """The subset of lighteval's ``GenerationParameters`` evaljig renders (all optional)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    max_new_tokens: Annotated[int, Field(ge=1)] | None = None
    top_p: Annotated[float, Field(gt=0, le=1)] | None = None
    seed: int | None = None
    stop_tokens: list[str] | None = None
    presence_penalty: Annotated[float, Field(ge=-2, le=2)] | None = None
    frequency_penalty: Annotated[float, Field(ge=-2, le=2)] | None = None


class RetryPolicy(BaseModel):
    """lighteval's own retry loop: ``attempts`` tries, sleeping ``sleep * multiplier**i``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    attempts: Annotated[int, Field(ge=1, le=100)] = 8
    sleep: Annotated[float, Field(ge=0, le=600)] = 1.0
    multiplier: Annotated[float, Field(ge=1, le=10)] = 2.0


class ProviderSpec(BaseModel):
    """A provider and model as evaljig users write them (JSON or YAML)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
    base_url: str
    model: Annotated[str, Field(min_length=1)]
    api_key_env: str
    generation: GenerationParameters = GenerationParameters()
    retry: RetryPolicy = RetryPolicy()
    timeout: Annotated[float, Field(gt=0, le=3600)] | None = None
    concurrency: Annotated[int, Field(ge=1, le=1024)] = 1
    max_model_length: Annotated[int, Field(ge=1)] | None = None
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
        if not re.match(r"^https?://[^\s/]+", value):
            raise ValueError("must be an http:// or https:// URL")
        return value.rstrip("/")

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


def load_provider_spec(path: Path) -> ProviderSpec:
    """Load a spec from ``.json``, ``.yaml`` or ``.yml``; errors name the file, field and reason."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read provider spec: {exc}") from exc
    try:
        if path.suffix == ".json":
            data = json.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text)
        else:
            raise ConfigError(f"{path}: provider specs must be .json, .yaml or .yml")
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: not valid {path.suffix[1:].upper()}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of provider fields, got {type(data).__name__}")
    return parse_provider_spec(data, source=str(path))


def parse_provider_spec(data: dict[str, Any], source: str = "<spec>") -> ProviderSpec:
    try:
        return ProviderSpec.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"]) or "(spec)"
            problems.append(f"{source}: field '{field}': {err['msg'].removeprefix('Value error, ')}")
        raise ConfigError("\n".join(problems)) from None
