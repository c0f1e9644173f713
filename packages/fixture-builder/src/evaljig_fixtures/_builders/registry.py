"""``BUILDERS``: every regen step, in run order. Adding a fixture is one ``Builder`` and one entry here."""

from __future__ import annotations

from evaljig_fixtures._builders.dataset_packages import MINI_MMLU, POLYGLOT
from evaljig_fixtures._builders.goldens import CALLER_CASSETTES, CONFIG_GOLDEN, LIGHTEVAL_GOLDENS
from evaljig_fixtures._builders.providers import PROVIDERS
from evaljig_fixtures._regen.builder import Builder

BUILDERS: tuple[Builder, ...] = (PROVIDERS, MINI_MMLU, POLYGLOT, CONFIG_GOLDEN, CALLER_CASSETTES, LIGHTEVAL_GOLDENS)
