"""The offline environment: one read-only copy for every lighteval run and test session."""

from __future__ import annotations

import pytest

from evaljig_common import OFFLINE_ENV


def test_offline_env_is_read_only() -> None:
    assert dict(OFFLINE_ENV) == {
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "TOKENIZERS_PARALLELISM": "false",
    }
    with pytest.raises(TypeError):
        OFFLINE_ENV["HF_HUB_OFFLINE"] = "0"  # type: ignore[index]
