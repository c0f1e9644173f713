"""What the LEV matrix runs on: the committed fixtures, the placeholder key, the extracted datasets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
FIXTURES = ROOT / "fixtures"
EXPECTED_CONFIG = FIXTURES / "configs" / "expected-config.yaml"
EXPECTED_STDOUT = FIXTURES / "configs" / "expected-cli-stdout.txt"
SDK_CALLS_PER_ATTEMPT = 3  # 1 + the OpenAI SDK's 2 retries inside litellm (see test_lev_api.py)
FAKE_KEY_ENV = "EVALJIG_FAKE_API_KEY"
FAKE_KEY = "sk-evaljig-fake-0000"  # a placeholder the gateway ignores; must never appear in any file


@dataclass(frozen=True)
class Dataset:
    task: str
    """lighteval task spec, e.g. ``mini_mmlu|0``."""
    module: Path
    rows: int
    answer_key: dict[str, str]


def extract_dataset(tmp_path_factory: pytest.TempPathFactory, name: str, task: str) -> Dataset:
    from evaljig_fixtures import load_dataset_package

    package = load_dataset_package(FIXTURES / "datasets" / f"{name}.eval752.zip")
    folder = tmp_path_factory.mktemp(name)
    package.extract_to(folder)
    return Dataset(f"{task}|0", folder / f"{task}.py", len(package.rows), dict(package.answer_key))


def assert_no_secret(folder: Path) -> None:
    leaked = [p for p in folder.rglob("*") if p.is_file() and FAKE_KEY.encode() in p.read_bytes()]
    assert not leaked, f"the api key was left in {leaked}"
