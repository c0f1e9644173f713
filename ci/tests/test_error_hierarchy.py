"""One error hierarchy: every exception an evaljig package exports derives from ``EvaljigError``.

Walked, not listed: every package under packages/*/src, its ``__all__`` and the ``__all__`` of
each public (unprefixed) submodule, so a new package or a new error is checked without
anyone remembering to add it here.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

from evaljig_common import EvaljigError

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = sorted(p.name for p in ROOT.glob("packages/*/src/evaljig_*") if (p / "__init__.py").is_file())


def public_exceptions() -> list[type[BaseException]]:
    """Every exception class in a package's or a public submodule's ``__all__`` (each class once)."""
    found: dict[str, type[BaseException]] = {}
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        modules = [package]
        for info in pkgutil.iter_modules(package.__path__, f"{package_name}."):
            short = info.name.rsplit(".", 1)[1]
            if not short.startswith("_"):
                modules.append(importlib.import_module(info.name))
        for module in modules:
            for name in getattr(module, "__all__", ()):
                value = getattr(module, name)
                if isinstance(value, type) and issubclass(value, BaseException):
                    found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[key] for key in sorted(found)]


EXCEPTIONS = public_exceptions()


def test_every_package_is_walked() -> None:
    assert len(PACKAGES) == 8
    assert {e.__module__.split(".")[0] for e in EXCEPTIONS} == set(PACKAGES)  # common: EvaljigError itself


@pytest.mark.parametrize("exc", EXCEPTIONS, ids=lambda e: e.__qualname__)
def test_every_public_exception_is_an_evaljig_error(exc: type[BaseException]) -> None:
    assert issubclass(exc, EvaljigError), f"{exc.__module__}.{exc.__qualname__} does not derive from EvaljigError"


@pytest.mark.parametrize(
    ("name", "stdlib_base"),
    [
        ("evaljig_config.ConfigError", ValueError),
        ("evaljig_config.RetryBudgetExhausted", RuntimeError),
        ("evaljig_config.LightEvalUnavailable", RuntimeError),
        ("evaljig_cases.CaseLoadError", ValueError),
        ("evaljig_cases.DuplicateCaseError", ValueError),
        ("evaljig_gateway.AnswerKeyError", ValueError),
        ("evaljig_gateway.GatewayStartError", RuntimeError),
        ("evaljig_gateway.CassetteError", ValueError),
        ("evaljig_corpus.strict_json.JsonInputError", ValueError),
    ],
)
def test_errors_keep_their_stdlib_base(name: str, stdlib_base: type[Exception]) -> None:
    """Callers that catch ``ValueError`` or ``RuntimeError`` today still catch these."""
    module, _, attribute = name.rpartition(".")
    assert issubclass(getattr(importlib.import_module(module), attribute), stdlib_base)


def test_evaljig_error_is_one_base_callers_can_catch() -> None:
    from evaljig_config import ConfigError, parse_provider_spec

    with pytest.raises(EvaljigError) as caught:
        parse_provider_spec({"name": "x"})
    assert isinstance(caught.value, ConfigError)
