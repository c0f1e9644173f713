"""Fixtures of the config-service tests: a parsed placeholder spec, a fake ``lighteval`` command."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from evaljig_config import ProviderSpec, parse_provider_spec

from .placeholders import FAKE_KEY, FAKE_KEY_ENV, FAKE_LIGHTEVAL, SPEC


@pytest.fixture
def spec(monkeypatch: pytest.MonkeyPatch) -> ProviderSpec:
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_KEY)
    return parse_provider_spec(SPEC)


@pytest.fixture
def fake_lighteval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``lighteval`` command (``fake_lighteval.py``) first on PATH; its folder."""
    if Path(sys.executable).with_name("lighteval").exists():
        pytest.skip("the real lighteval sits beside this interpreter and the runner prefers it")
    folder = tmp_path / "bin"
    folder.mkdir()
    command = folder / "lighteval"
    command.write_text(f"#!{sys.executable}\n{FAKE_LIGHTEVAL.read_text(encoding='utf-8')}", encoding="utf-8")
    command.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return folder
