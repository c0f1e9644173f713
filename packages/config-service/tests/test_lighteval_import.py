"""Importing lighteval's stack with the garbage collector paused: off during the import, its survivors frozen,
the collector's state as it was after (why: ``collector_paused``'s docstring, 27 % less CPU measured)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaljig_config import LightEvalUnavailable
from evaljig_config._lighteval_import import collector_paused, import_lighteval_module

PROBE = "evaljig_gc_probe"


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module that records whether the collector ran while it was imported."""
    (tmp_path / f"{PROBE}.py").write_text("import gc\n\nCOLLECTOR_ON = gc.isenabled()\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield PROBE
    sys.modules.pop(PROBE, None)
    gc.unfreeze()  # give this test process's objects back to the collector


def test_the_import_runs_with_the_collector_off_and_freezes_what_it_made(probe: str) -> None:
    assert gc.isenabled()
    frozen = gc.get_freeze_count()

    module = import_lighteval_module(probe)

    assert module.COLLECTOR_ON is False
    assert gc.isenabled()  # back on for the run
    assert gc.get_freeze_count() > frozen


def test_a_module_already_imported_is_returned_as_it_is(probe: str) -> None:
    first = import_lighteval_module(probe)
    gc.unfreeze()  # the frozen set empty (its count falls as frozen objects are freed, so no count is compared)

    assert import_lighteval_module(probe) is first
    assert gc.get_freeze_count() == 0  # nothing imported, nothing frozen


def test_a_caller_that_turned_the_collector_off_keeps_it_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_a_failed_import_still_turns_the_collector_back_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "evaljig_broken_probe.py").write_text("raise ImportError('no native library')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(LightEvalUnavailable, match="no native library"):
            import_lighteval_module("evaljig_broken_probe")
        assert gc.isenabled()
    finally:
        gc.unfreeze()
