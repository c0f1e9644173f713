"""``BUILDERS``: every regen step, in run order. Adding a fixture is one ``Builder`` and one entry here."""

from __future__ import annotations

from evaljig_fixtures.builders.datasets import MINI_MMLU, POLYGLOT
from evaljig_fixtures.builders.goldens import CONFIG_GOLDEN, FACTORY_CASSETTES, LIGHTEVAL_GOLDENS
from evaljig_fixtures.builders.providers import PROVIDERS
from evaljig_fixtures.regen.builder import Builder

BUILDERS: tuple[Builder, ...] = (PROVIDERS, MINI_MMLU, POLYGLOT, CONFIG_GOLDEN, FACTORY_CASSETTES, LIGHTEVAL_GOLDENS)
