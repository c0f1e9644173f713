"""The hand-over between eval cases and the reporter: one key, and text xdist can always send."""

from __future__ import annotations

import re
from typing import Any, TypeVar, cast

#: The ``item.user_properties`` key under which a case hands its record to the reporter.
RECORD_KEY = "evaljig.case"

_SURROGATE = re.compile("[\ud800-\udfff]")
_T = TypeVar("_T")


def valid_text(value: _T) -> _T:
    """``value`` with lone surrogates (undecodable bytes kept by ``surrogateescape``) replaced by U+FFFD.

    Walks strings, dict keys and values, and lists (JSON values); anything else comes back as is.
    xdist sends reports to the controller as UTF-8 and fails the whole session on a string it cannot encode.
    """
    return cast(_T, _valid(value))


def _valid(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_valid(k): _valid(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_valid(v) for v in value]
    return value
