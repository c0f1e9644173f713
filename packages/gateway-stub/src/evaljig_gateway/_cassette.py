"""The cassette format: vcrpy-compatible YAML that a reviewer can read, and that never holds a secret.

One file, two players: vcrpy (and pytest-recording) replays it in-process, the gateway's
``--replay`` out of process. So the layout is vcrpy's (``version: 1``, ``interactions`` of
``request``/``response``), every URI is under :data:`CANONICAL_BASE_URL` (the upstream's host is
never written) and the only request header is ``content-type: application/json``, which makes
vcrpy's ``body`` matcher compare parsed JSON: a pretty-printed recording matches a compact
live request. For review, JSON bodies are written pretty-printed (indent 2, key order as sent)
and streamed answers as their SSE text, both as YAML literal blocks (``|``).

Reading is evaljig-common's strict YAML reader (bounded nesting, no aliases, no repeated key, one
document), then validates the shape by hand and names the file, entry and field of the
first problem. Writing is atomic and refuses (writing nothing) when a secret is anywhere in the
final bytes. Each interaction is serialised on its own (:func:`item_text`): a recording keeps the
text of what it recorded as it goes, and of what it loaded as the file had it, so writing even a
100 MB cassette is a join, never PyYAML's emitter (about 1 MB/s) run over everything at stop.
This module does no network I/O and knows nothing of the server.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.client import responses
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
import yaml

from evaljig_common import (
    CANONICAL_BASE_URL,
    EvaljigError,
    StrictYAMLError,
    credential_params,
    find_secret,
    loads_yaml_strict,
    write_bytes_atomic,
)
from evaljig_gateway._behaviours import base_model

#: A cassette larger than this is refused when read, and not written when recorded.
DEFAULT_MAX_CASSETTE_BYTES = 256 * 1024 * 1024
#: Top-level request fields left out of the match by default: they tag or shape the delivery of a
#: request (``user``, ``metadata``: the caller's own bookkeeping; ``stream_options``: added or not
#: by the client's version) and never change which answer the model gives.
DEFAULT_IGNORED_FIELDS: frozenset[str] = frozenset({"stream_options", "user", "metadata"})
#: Response headers kept (lower-case names): the ones clients read (status handling, retry timing). Nothing
#: that varies per call (ids, dates, cookies) so that a re-record differs only where answers do.
_KEPT_HEADER = re.compile("content-type|retry-after|retry-after-ms|x-ratelimit-.*", re.DOTALL)
SSE_TYPE = "text/event-stream"

#: Body fields that hold credentials by name (query parameters: evaljig-common's ``credential_params``).
_SECRET_FIELD = re.compile(r"(?i)^(api[-_]?key|access[-_]?token)$")
#: Characters a YAML loader turns into a plain newline inside a block scalar (they would not round-trip).
_BLOCK_UNSAFE = re.compile("[\r\x85\u2028\u2029]")
#: Outside printable ASCII: written double-quoted, where the emitter escapes what needs it.
_NOT_PLAIN_ASCII = re.compile("[^\x20-\x7e]")
#: Lone UTF-16 halves: no YAML (and no UTF-8) can hold them; inside JSON they are written as ``\\udXXX`` escapes.
_SURROGATE = re.compile("[\ud800-\udfff]")
_HEAD, _TAIL = b"interactions:\n", b"version: 1\n"

MatchKey = tuple[str, str, bytes]


class CassetteError(EvaljigError, ValueError):
    """A cassette that cannot be read (names the file, entry and field) or must not be written (a secret)."""


@dataclass(frozen=True, slots=True)
class Exchange:
    """One recorded request and its answer, as text the way the file holds it."""

    method: str
    path: str
    """The client's path from ``/v1/`` on, with its query string (``/v1/chat/completions``)."""
    request_body: str
    """The request's JSON (pretty-printed when recorded by the gateway), or ``""`` for none."""
    status: int
    headers: tuple[tuple[str, str], ...]
    """Kept response headers, lower-case names, in the file's order."""
    body: str
    """The answer: JSON text, or for a streamed answer its SSE events (``data: ...\\n\\n``)."""
    message: str = ""
    """The status line's reason phrase."""

    @property
    def content_type(self) -> str:
        return next((value for name, value in self.headers if name == "content-type"), "")


#: What must never be written: secret values by a label that names them (never the value) in errors.
Secrets = Mapping[str, str]


# --- text forms -----------------------------------------------------------------------------------------------


def loads_json(raw: bytes | str) -> Any:
    """Parse JSON; integers past 64 bits and lone surrogates (a canonical body's ``surrogatepass`` bytes), which
    orjson refuses, through the standard library."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:  # the standard library raises json.JSONDecodeError (a ValueError) on syntax errors
        return json.loads(raw.decode("utf-8", "surrogatepass") if isinstance(raw, bytes) else raw)


def request_json(text: str) -> Any:
    """A recorded request body's JSON value; None for a blank body (a GET sends none, whitespace is none too)."""
    return loads_json(text) if text.strip() else None


def pretty_json(value: Any) -> str:
    """Indent 2, key order kept, non-ASCII as is: what a reviewer reads in a diff."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except (orjson.JSONEncodeError, TypeError):
        return _escape_surrogates(json.dumps(value, indent=2, ensure_ascii=False))


def compact_json(text: str) -> bytes:
    """A JSON text as a server sends it (compact), whatever it holds: integers past 64 bits and lone
    surrogates (an answer cut inside an emoji, ``"\\ud83d"``) stay exactly what was recorded."""
    try:
        return kept(orjson.dumps(orjson.loads(text)))
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        value = json.loads(text)
        return _escape_surrogates(json.dumps(value, separators=(",", ":"), ensure_ascii=False)).encode()


def kept(data: bytes) -> bytes:
    """``data`` in a bytes object of its own size, for what a replayer keeps for its lifetime: orjson hands
    back its growth buffer (a 2 KB body can hold 16 KiB), which made loading cost 7x the cassette."""
    return memoryview(data).tobytes() if len(data) > 512 else data


def _escape_surrogates(text: str) -> str:
    """JSON text with each lone surrogate (only ever inside a string) as its ``\\udXXX`` escape: valid
    JSON meaning the same value, and text that UTF-8 and YAML can hold."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def sse_text(raw: bytes) -> str:
    """A streamed answer as text with ``\\n`` line endings (SSE allows ``\\r\\n`` and ``\\r`` too: same events)."""
    return raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def sse_events(text: str) -> list[bytes]:
    """The events of an SSE text, each with its blank-line terminator, as the gateway sends them."""
    return [f"{part}\n\n".encode() for part in text.split("\n\n") if part.strip("\n")]


def kept_headers(headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The response headers a cassette keeps, lower-cased, content-type first, the rest sorted."""
    kept = {name.lower(): value for name, value in headers if _KEPT_HEADER.fullmatch(name.lower())}
    return tuple(sorted(kept.items(), key=lambda item: (item[0] != "content-type", item[0])))


# --- matching -------------------------------------------------------------------------------------------------


def match_key(method: str, path: str, body: Any, ignore: frozenset[str] = DEFAULT_IGNORED_FIELDS) -> MatchKey:
    """``(method, path with query, canonical body)``: what a replayed request is looked up by.

    The body is the parsed JSON (``None`` for no body). Key order and whitespace drop out
    (sorted keys, compact), ``1.0`` equals ``1`` (as it does for vcrpy, which compares parsed
    JSON), ``ignore``'d top-level fields are left out and ``model`` loses its behaviour tokens.
    """
    if body is None:
        return (method.upper(), path, b"")
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k not in ignore}
        model = body.get("model")
        if isinstance(model, str):
            body["model"] = base_model(model)
    body = _integral_floats_as_ints(body)
    try:
        return (method.upper(), path, kept(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)))
    except orjson.JSONEncodeError:  # an integer past 64 bits, a lone surrogate
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return (method.upper(), path, text.encode("utf-8", "surrogatepass"))


def _integral_floats_as_ints(value: Any) -> Any:
    if isinstance(value, float):
        return int(value) if value.is_integer() else value  # False for inf and nan
    if isinstance(value, dict):
        return {k: _integral_floats_as_ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral_floats_as_ints(v) for v in value]
    return value


# --- writing --------------------------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (pretty JSON, SSE text) as literal blocks, the rest quoted where it must be.

    Always PyYAML's own emitter, never libyaml's (``CSafeDumper``): the two choose styles differently
    (libyaml writes no block holding a character outside the BMP), and a cassette must be the same
    bytes on every machine, with or without libyaml.
    """


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    if "\n" in text and not _BLOCK_UNSAFE.search(text):
        style: str | None = "|"
    elif _NOT_PLAIN_ASCII.search(text):
        style = '"'  # escapes what a loader would read back differently (U+0085 read as a line break)
    else:
        style = None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _represent_str)


def item_text(exchange: Exchange) -> bytes:
    """One interaction as the cassette holds it (``- request: ...``, every line ending in ``\\n``).

    ``interactions:`` + the items + ``version: 1`` is byte for byte what PyYAML writes for the whole
    document (its sequence under a top-level key is not indented), so an item is serialised once, when
    it is recorded, and a cassette is written by joining. Raises ``ValueError`` naming the field for a
    text no YAML can hold (a lone surrogate).
    """
    texts = [("request.uri", exchange.path), ("request.body", exchange.request_body),
             ("response.body.string", exchange.body), ("response.status.message", exchange.message)]  # fmt: skip
    texts += [(f"response.headers.{name}", f"{name}{value}") for name, value in exchange.headers]
    for where, value in texts:
        if _SURROGATE.search(value):
            raise ValueError(f"{where}: holds a lone surrogate (half of a UTF-16 pair), which YAML cannot hold")
    interaction = {
        "request": {
            "body": exchange.request_body or None,
            "headers": {"content-type": ["application/json"]},
            "method": exchange.method,
            "uri": CANONICAL_BASE_URL + exchange.path.removeprefix("/v1"),
        },
        "response": {
            "body": {"string": exchange.body},
            "headers": {name: [value] for name, value in exchange.headers},
            "status": {"code": exchange.status, "message": exchange.message or responses.get(exchange.status, "")},
        },
    }
    text: str = yaml.dump([interaction], Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1 << 30)
    return text.removesuffix("...\n").encode()  # the stream end after a kept-newline (|+) block: not inside


#: An exchange with its serialised text (:func:`item_text`): what a recording keeps until it writes.
Item = tuple[Exchange, bytes]


def items_of(path: Path | str, exchanges: Sequence[Exchange]) -> list[Item]:
    """``exchanges`` with their text; a text YAML cannot hold raises :class:`CassetteError` naming the entry."""
    items: list[Item] = []
    for index, exchange in enumerate(exchanges):
        try:
            items.append((exchange, item_text(exchange)))
        except ValueError as exc:
            raise _refused(path, f"interactions[{index}].{exc}") from None
    return items


def join_items(texts: Sequence[bytes]) -> bytes:
    """The cassette's bytes from its items' texts."""
    if not texts:
        return b"interactions: []\n" + _TAIL
    return b"".join([_HEAD, *texts, _TAIL])


def dump_cassette(exchanges: Sequence[Exchange]) -> bytes:
    """The cassette's bytes: the same exchanges give the same bytes."""
    return join_items([text for _, text in items_of("(cassette)", exchanges)])


def write_cassette(
    path: Path,
    exchanges: Sequence[Exchange],
    *,
    secrets: Secrets | None = None,
    max_bytes: int = DEFAULT_MAX_CASSETTE_BYTES,
) -> int:
    """Write ``exchanges`` to ``path`` atomically after the secret scan and size check; returns the size.

    Any secret found, a text YAML cannot hold or a size over ``max_bytes`` raises :class:`CassetteError`
    and writes nothing: the previous file stays as it was.
    """
    return write_items(path, items_of(path, exchanges), secrets=secrets, max_bytes=max_bytes)


def write_items(
    path: Path, items: Sequence[Item], *, secrets: Secrets | None = None, max_bytes: int = DEFAULT_MAX_CASSETTE_BYTES
) -> int:
    """:func:`write_cassette` for exchanges already serialised: a join, the checks, one atomic write."""
    check_names(path, [exchange for exchange, _ in items])
    data = join_items([text for _, text in items])
    if len(data) > max_bytes:
        raise CassetteError(
            f"{path}: refusing to write a cassette of {len(data):,} bytes: over the limit of {max_bytes:,} bytes "
            "(--max-cassette-bytes)"
        )
    # Any secret value, in any spelling ``find_secret`` knows (raw, JSON- or URL-encoded, base64 at any alignment
    # and wrapped, split across a streamed answer's deltas): named (never its value) with the spelling and line.
    hit = find_secret(data, secrets or {})
    if hit is not None:
        raise _refused(path, f"{hit.where} holds {hit.label} ({hit.form}); nothing was written")
    write_bytes_atomic(path, data)
    return len(data)


def check_names(path: Path | str, exchanges: Sequence[Exchange]) -> None:
    """Credentials by name: a query parameter like ``api_key``/``token``/``sig`` (evaljig-common's
    ``credential_params``, the list a provider spec's ``base_url`` is checked against), a body field
    like ``api_key``."""
    for index, exchange in enumerate(exchanges):
        named = credential_params(urlsplit(exchange.path).query)
        field = next((key for key in _keys(request_json(exchange.request_body)) if _SECRET_FIELD.match(key)), None)
        found = f"uri has a query parameter '{named[0]}'" if named else f"body has a field '{field}'" if field else ""
        if found:
            raise _refused(path, f"interactions[{index}].request.{found} (credentials are never recorded)")


def _refused(path: Path | str, reason: str) -> CassetteError:
    """The one form of every refusal to write a cassette."""
    return CassetteError(f"{path}: refusing to write the cassette: {reason}")


def _keys(value: Any) -> Iterator[str]:
    """Every key of a JSON value, each before those nested under it."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


# --- reading --------------------------------------------------------------------------------------------------


#: Containers nested deeper than this are refused (a cassette needs 5; vcrpy's JSON-in-YAML none more).
MAX_DEPTH = 64


def load_cassette(path: Path, max_bytes: int = DEFAULT_MAX_CASSETTE_BYTES) -> list[Exchange]:
    """Read and validate ``path``; the first problem raises :class:`CassetteError` naming file, entry and field.

    Bounded whatever the file holds: its size by ``max_bytes`` (checked before parsing), its nesting by
    ``MAX_DEPTH``, and no anchors or aliases, so what is built is proportional to the file.
    """
    try:
        with path.open("rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if size > max_bytes:
                raise CassetteError(
                    f"{path}: the cassette is {size:,} bytes, over the limit of {max_bytes:,} bytes "
                    "(--max-cassette-bytes)"
                )
            document = loads_yaml_strict(stream, max_depth=MAX_DEPTH, document="a cassette")
    except StrictYAMLError as exc:
        where = f"line {exc.line}, column {exc.column}: " if exc.line is not None else ""
        what = "not valid YAML: " if exc.kind == "syntax" else ""
        fix = "; keep the one you mean, or re-record the cassette" if exc.kind == "duplicate" else ""
        raise CassetteError(f"{path}: {where}{what}{exc.reason}{fix}") from None
    except OSError as exc:
        raise CassetteError(f"{path}: cannot read the cassette: {exc.strerror or exc}") from None
    if not isinstance(document, dict):
        raise CassetteError(f"{path}: expected a mapping with 'interactions', got {_kind(document)}")
    interactions = document.get("interactions")
    if not isinstance(interactions, list):
        raise CassetteError(f"{path}: interactions: expected a list, got {_kind(interactions)}")
    return [_exchange(_Node(path, f"interactions[{i}]", item).mapping()) for i, item in enumerate(interactions)]


def read_items(path: Path, max_bytes: int = DEFAULT_MAX_CASSETTE_BYTES) -> list[Item]:
    """:func:`load_cassette` with each exchange's text as the file holds it, so writing it back is a copy.

    A file laid out as a writer of vcrpy's format lays it out (``interactions:``, its items at column 0,
    ``version: 1`` last) is cut at its items; any other layout is serialised again (same values).
    """
    exchanges = load_cassette(path, max_bytes)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CassetteError(f"{path}: cannot read the cassette: {exc.strerror or exc}") from None
    if exchanges and raw.startswith(_HEAD + b"- ") and raw.endswith(b"\n" + _TAIL):
        texts = re.split(b"(?<=\n)(?=- )", raw[len(_HEAD) : -len(_TAIL)])  # cut before each "- " at a line start
        if len(texts) == len(exchanges):
            return list(zip(exchanges, texts, strict=True))
    return items_of(path, exchanges)


_MISSING = object()


@dataclass(frozen=True, slots=True)
class _Node:
    """A value read from the cassette and where it is (``interactions[3].request.uri``), for errors naming it."""

    path: Path
    at: str
    value: Any

    def error(self, reason: str) -> CassetteError:
        return CassetteError(f"{self.path}: {self.at}: {reason}")

    def field(self, name: str, default: Any = _MISSING) -> _Node:
        """The field ``name`` of this mapping (checked by :meth:`mapping`); missing is an error without ``default``."""
        node = _Node(self.path, f"{self.at}.{name}", self.value.get(name, default))
        if node.value is _MISSING:
            raise node.error("missing")
        return node

    def mapping(self) -> _Node:
        if not isinstance(self.value, dict):
            raise self.error(f"expected a mapping, got {_kind(self.value)}")
        return self

    def string(self) -> str:
        if not isinstance(self.value, str):
            raise self.error(f"expected a string, got {self.value!r}")
        return self.value

    def text(self) -> str:
        """A body: text, bytes (vcrpy's ``!!binary``) that are UTF-8, or nothing."""
        if self.value is None:
            return ""
        if isinstance(self.value, bytes):
            try:
                return self.value.decode("utf-8")
            except UnicodeDecodeError:
                raise self.error("binary content that is not UTF-8 text") from None
        return self.string()

    def json_text(self, problem: str) -> str:
        """:meth:`text` that is blank or JSON; anything else is an error: ``problem (the parser's reason)``."""
        text = self.text()
        try:
            request_json(text)
        except ValueError as exc:
            raise self.error(f"{problem} ({exc})") from None
        return text


def _exchange(entry: _Node) -> Exchange:
    request, response = entry.field("request").mapping(), entry.field("response").mapping()
    method = request.field("method").string().upper()
    uri = request.field("uri")
    parts = urlsplit(uri.string())
    if not parts.path.startswith("/v1/"):
        raise uri.error(f"expected a URI under /v1/, got {uri.value!r}")
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    request_body = request.field("body").json_text("not JSON")
    status = response.field("status").mapping()
    code = status.field("code")
    if isinstance(code.value, bool) or not isinstance(code.value, int):
        raise code.error(f"expected an integer, got {code.value!r}")
    if not 100 <= code.value <= 599:
        raise code.error(f"expected an HTTP status (100-599), got {code.value}")
    message = status.field("message", "").string()
    headers = _headers(response.field("headers", {}).mapping())
    answer = response.field("body").mapping().field("string")
    exchange = Exchange(method, path, request_body, code.value, headers, answer.text(), message)
    if "json" in exchange.content_type:
        answer.json_text("content-type is JSON but the body is not")
    return exchange


def _headers(headers: _Node) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for name, values in headers.value.items():
        if not isinstance(name, str):
            raise headers.error(f"expected header names as strings, got {name!r}")
        for item in values if isinstance(values, list) else [values]:
            if not isinstance(item, str | int):
                raise headers.field(name).error(f"expected a string or a list of strings, got {item!r}")
            out.append((name.lower(), str(item)))
    return tuple(out)


def _kind(value: Any) -> str:
    return "nothing" if value is None else f"a {type(value).__name__}"
