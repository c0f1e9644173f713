"""The pytest plugin (entry point ``pytest11``: ``evaljig_review``): the ``golden`` fixture and the orphan check.

Installed with evaljig-review, it works in any repository without a conftest line. Its ini
options (``[tool.pytest.ini_options]`` or ``pytest.ini``):

- ``evaljig_golden_dir``: the golden folder, relative to the rootdir (default ``golden``);
- ``evaljig_golden_layout``: ``path`` (default) or ``packages`` (see ``evaljig_review._golden``);
- ``evaljig_golden_update_command``: what the orphan report tells you to run (default
  ``pytest --snapshot-update``).

syrupy's own options (``--snapshot-update``, ``--snapshot-warn-unused``, ...) drive both. Kept
light on purpose: it is imported into every pytest session of an environment that has it.
"""

from __future__ import annotations

from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from evaljig_review._golden import (
    GOLDEN_DIRNAME,
    LAYOUTS,
    Golden,
    GoldenSettings,
    configure,
)
from evaljig_review._orphans import GoldenOrphans

_PREVIOUS = "_evaljig_golden_previous_settings"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("evaljig_golden_dir", "the golden snapshot folder, relative to the rootdir", default=GOLDEN_DIRNAME)
    parser.addini(
        "evaljig_golden_layout",
        "where a test module's goldens go: 'path' (<dir>/<module path>/<test>) or 'packages' (<dir>/<pkg>/<module>/)",
        default="path",
    )
    parser.addini(
        "evaljig_golden_update_command",
        "the command the orphaned-golden report names",
        default="pytest --snapshot-update",
    )


def settings_from(config: pytest.Config) -> GoldenSettings:
    """This session's golden settings, from the ini options; a bad layout is a usage error naming the option."""
    layout = str(config.getini("evaljig_golden_layout")).strip()
    if layout not in LAYOUTS:
        raise pytest.UsageError(f"evaljig_golden_layout: {layout!r} is not one of {', '.join(LAYOUTS)}")
    root = config.rootpath
    return GoldenSettings(
        root=root,
        golden=root / str(config.getini("evaljig_golden_dir")).strip(),
        layout=layout,
        update_command=str(config.getini("evaljig_golden_update_command")).strip(),
    )


def pytest_configure(config: pytest.Config) -> None:
    """Settings for this process; the orphan check in the controller only (never in xdist workers)."""
    settings = settings_from(config)
    setattr(config, _PREVIOUS, configure(settings))
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(GoldenOrphans(settings), "evaljig-golden-orphans")


def pytest_unconfigure(config: pytest.Config) -> None:
    previous = getattr(config, _PREVIOUS, None)
    if previous is not None:
        configure(previous)


@pytest.fixture
def golden(request: pytest.FixtureRequest, snapshot: SnapshotAssertion) -> Golden:
    """Readable golden snapshot: ``assert golden == value`` (YAML for data, text for ``str``)."""
    from evaljig_review import _golden

    _golden.SETTINGS.module_dir(request.path)  # a module the layout cannot place: GoldenPlacementError, the reason
    return Golden(snapshot)


@pytest.hookimpl(tryfirst=True)
def pytest_assertrepr_compare(config: pytest.Config, op: str, left: Any, right: Any) -> list[str] | None:
    """Show syrupy's diff for ``assert golden == value`` failures."""
    if isinstance(left, Golden) and left.last is not None:
        return [f"golden {op} received", *left.last.get_assert_diff()]
    return None
