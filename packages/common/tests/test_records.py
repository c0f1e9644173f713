"""The case-record hand-over: one key, and text that always encodes as UTF-8."""

from __future__ import annotations

import json

from evaljig_common import RECORD_KEY, valid_text

BAD = b"caf\xe9".decode("utf-8", "surrogateescape")


def test_record_key_is_the_reporters_property_name() -> None:
    assert RECORD_KEY == "evaljig.case"


def test_lone_surrogates_are_replaced_everywhere() -> None:
    value = {BAD: [BAD, {"k": BAD}, 3, None, 1.5], "ok": "fine"}
    cleaned = valid_text(value)
    assert cleaned == {"caf\ufffd": ["caf\ufffd", {"k": "caf\ufffd"}, 3, None, 1.5], "ok": "fine"}
    json.dumps(cleaned, ensure_ascii=False).encode("utf-8")  # would raise on a surrogate
    assert value[BAD][0] == BAD, "the input is not changed"


def test_valid_strings_and_other_values_come_back_unchanged() -> None:
    assert valid_text("plain ✓ \U0001f600") == "plain ✓ \U0001f600"
    assert valid_text(42) == 42
    marker = object()
    assert valid_text(marker) is marker
