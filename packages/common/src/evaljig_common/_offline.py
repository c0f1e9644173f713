"""The environment that keeps lighteval, LiteLLM and Hugging Face libraries off the network."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

#: Set for every lighteval run and every test session; read-only, so no caller can change it for the others.
OFFLINE_ENV: Mapping[str, str] = MappingProxyType(
    {
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        # LiteLLM fetches its model cost map from GitHub at import unless told to use its bundled copy
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        # tokenizers warns (and may deadlock) when a process forks after using its thread pool
        "TOKENIZERS_PARALLELISM": "false",
    }
)
