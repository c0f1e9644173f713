"""Every strict JSON reader in evaljig gives the same verdict on the same hostile input.

evaljig-common's ``loads_strict``, the corpus loader's ``strict_json`` (dataset packages and sources
read through it too), the provider spec reader and the conformance check of a model's JSON
arguments: one table of inputs, one expected verdict each, the same for all. (This package's
tests see all of them: it depends on the corpus, the config service and common.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evaljig_common import EvaljigError, loads_strict
from evaljig_config import ConfigError
from evaljig_config._spec_files import read_mapping
from evaljig_corpus import strict_json
from evaljig_corpus._checks import Checker, ConformanceError
from evaljig_corpus._conformance.tools import _parse_arguments

DEEP = '{"a": ' + "[" * 50_000 + "]" * 50_000 + "}"
TABLE: list[tuple[str, bytes, bool]] = [  # (what, document, accepted)
    ("a repeated key", b'{"a": 1, "a": 2}', False),
    ("a repeated key, nested", b'{"a": {"b": 1, "c": 2, "b": 3}}', False),
    ("NaN", b'{"a": NaN}', False),
    ("-Infinity", b'{"a": -Infinity}', False),
    ("a float that overflows", b'{"a": 1e999}', False),
    ("a 5,000-digit integer", b'{"a": 1' + b"0" * 4999 + b"}", False),
    ("nesting 50,000 deep", DEEP.encode(), False),
    ("invalid UTF-8", b'{"a": "\xff"}', False),
    ("trailing data", b'{"a": 1} {"b": 2}', False),
    ("not JSON", b"{'a': 1}", False),
    ("a 4,300-digit integer", b'{"a": 1' + b"0" * 4299 + b"}", True),
    ("ordinary nesting", b'{"a": [[[{"b": [1, 2.5, -0, true, null]}]]]}', True),
    ("escapes", b'{"a": "\\u00e9\\ud83d\\ude00\\n", "b": "\\/"}', True),
    ("a large float", b'{"a": 1.7976931348623157e308}', True),
]


def _config(tmp: Path) -> Callable[[bytes], Any]:
    def read(data: bytes) -> Any:
        path = tmp / "spec.json"
        path.write_bytes(data)
        return read_mapping(path)

    return read


def _conformance(data: bytes) -> Any:
    return _parse_arguments(Checker("tools"), data.decode("utf-8"), "arguments")


READERS: dict[str, tuple[Callable[[Path], Callable[[bytes], Any]], tuple[type[Exception], ...]]] = {
    "evaljig_common.loads_strict": (lambda tmp: loads_strict, (EvaljigError,)),
    "evaljig_corpus.strict_json": (lambda tmp: strict_json.loads_bytes, (strict_json.JsonInputError,)),
    "provider spec files": (_config, (ConfigError,)),
    "conformance arguments": (lambda tmp: _conformance, (ConformanceError, UnicodeDecodeError)),
}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize(("what", "document", "accepted"), TABLE, ids=[row[0] for row in TABLE])
def test_every_reader_gives_the_same_verdict(
    tmp_path: Path, reader: str, what: str, document: bytes, accepted: bool
) -> None:
    make, refusals = READERS[reader]
    read = make(tmp_path)
    if accepted:
        assert isinstance(read(document), dict), what
    else:
        with pytest.raises(refusals):
            read(document)


@pytest.mark.parametrize(
    ("what", "document", "accepted"), [row for row in TABLE if not row[2]], ids=[row[0] for row in TABLE if not row[2]]
)
def test_the_reasons_are_the_same_words(what: str, document: bytes, accepted: bool) -> None:
    """The corpus reader says what evaljig-common says (only the depth bound is its own)."""
    with pytest.raises(EvaljigError) as common:
        loads_strict(document, max_depth=strict_json.MAX_DEPTH)
    with pytest.raises(strict_json.JsonInputError) as corpus:
        strict_json.loads_bytes(document)
    assert str(corpus.value) == f"{common.value.reason}{common.value.where}"  # type: ignore[attr-defined]
