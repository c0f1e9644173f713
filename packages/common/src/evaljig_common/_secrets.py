"""Finding a secret in what is about to be written: every spelling it may take, and streams joined first.

A key leaks in more spellings than its own: JSON-escaped (``\\"``, ``\\\\``, ``\\/``, any character
as ``\\uXXXX``), percent-encoded (upper- or lower-case hex, only the reserved characters or every
byte), base64 (standard or URL-safe alphabet, at any alignment inside a longer blob such as
``Basic user:key``, and MIME's with a line break every 76 characters), and in a streamed answer
split across SSE deltas, each piece of which holds only part of it.

:func:`secret_spellings` lists the spellings of one secret (what a scrubber replaces).
:func:`find_secret` is the scanner writers run over their final bytes: besides those spellings it
reads the data through decoding views (JSON escapes undone, percent-escapes undone, line breaks
between base64 characters removed), so mixed spellings are found too, and it joins the text of
every streamed answer (``data:`` events: chat deltas, completions text, tool-call arguments,
Responses deltas) before looking again. :func:`credential_values` reads a credential header the
way a server does: the scheme (``Bearer``, ``BEARER``, ``Token``, ``Basic``...) in any case.
:func:`credential_params` names the query parameters that carry a credential by their name (a
provider spec's ``base_url``, a recorded request's URI: one list for both).

The config service's scrubber, the gateway's cassette writer and the fixture builder's cassette
recorder all use these: one answer to "does this hold the key?".
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus

#: Query parameter names that carry a credential (lower-case, ``-`` read as ``_``): API keys, OAuth and
#: bearer tokens, basic-auth passwords, shared-access signatures (Azure's ``sig``).
CREDENTIAL_PARAMS = frozenset(
    {"api_key", "apikey", "key", "token", "access_token", "auth", "password", "secret", "sig", "signature"}
)

#: MIME base64 (RFC 2045) breaks lines after this many characters.
MIME_LINE = 76
#: A base64 run shorter than this is not looked for (it would match ordinary text by chance).
MIN_BASE64_CORE = 8

_JSON_ESCAPE = re.compile(rb'\\(?:u([0-9a-fA-F]{4})(?:\\u([0-9a-fA-F]{4}))?|(["\\/]))')
_PERCENT = re.compile(rb"%([0-9a-fA-F]{2})")
#: Line breaks (and a YAML block's indentation after one) and JSON-escaped line breaks, removed for base64.
_BREAK = re.compile(rb"\r?\n[ \t]*|(?:\\r)?\\n")
_SSE_DATA = re.compile(rb"^[ \t]*data: ?(.*?)\r?$", re.MULTILINE)
_SCHEME = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_.+-]*)\s+(\S.*?)\s*$")


def _u_escaped(secret: str, upper: bool) -> str:
    """Every character as ``\\uXXXX`` (UTF-16 surrogate pairs beyond the BMP), as some JSON writers send."""
    data = secret.encode("utf-16-be", "surrogatepass")
    units = [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]
    return "".join(f"\\u{unit:04X}" if upper else f"\\u{unit:04x}" for unit in units)


def _every_byte(secret: str, upper: bool) -> str:
    return "".join(f"%{byte:02X}" if upper else f"%{byte:02x}" for byte in secret.encode())


def _lower_hex(encoded: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded)


def base64_cores(secret: str) -> list[tuple[str, str]]:
    """The base64 characters that encode only ``secret``'s bits, at each of the 3 alignments it may
    take inside a longer blob, in the standard and URL-safe alphabets: ``(form, core)``."""
    raw = secret.encode()
    out: list[tuple[str, str]] = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode()
        start, end = -(-offset * 8 // 6), (offset + len(raw)) * 8 // 6
        core = encoded[start:end]
        if len(core) >= MIN_BASE64_CORE:
            out.append(("base64", core))
            out.append(("base64 (URL-safe)", core.translate(str.maketrans("+/", "-_"))))
    return out


def _mime(core: str) -> Iterator[str]:
    """``core`` with a line break every ``MIME_LINE`` characters, for each place the first break may fall."""
    for first in range(1, min(MIME_LINE, len(core))):
        for newline in ("\n", "\r\n"):
            cuts = range(first, len(core), MIME_LINE)
            parts = [core[a:b] for a, b in zip([0, *cuts], [*cuts, len(core)], strict=True)]
            yield newline.join(parts)


def secret_spellings(secret: str, *, mime: bool = True) -> list[tuple[str, str]]:
    """``(form, text)`` for every spelling of ``secret`` a file or a request may hold, longest first.

    Raw; JSON-escaped (ASCII-only or not, ``/`` as ``\\/``, every character as ``\\uXXXX`` in either
    case); percent-encoded (``quote`` with and without ``/`` safe, ``quote_plus``, lower-case hex,
    every byte in either case); base64 cores (see :func:`base64_cores`) and, with ``mime``, those
    cores with MIME line breaks (``\\n`` or ``\\r\\n``) wherever the 76-character lines fall.
    """
    forms: list[tuple[str, str]] = [("as is", secret)]
    for escaped in (json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]):
        forms += [("JSON-escaped", escaped), ("JSON-escaped", escaped.replace("/", "\\/"))]
    forms += [("JSON-escaped (\\u)", _u_escaped(secret, upper)) for upper in (False, True)]
    for encoded in (quote(secret, safe=""), quote(secret), quote_plus(secret, safe="")):
        forms += [("URL-encoded", encoded), ("URL-encoded", _lower_hex(encoded))]
    forms += [("URL-encoded (every byte)", _every_byte(secret, upper)) for upper in (True, False)]
    cores = base64_cores(secret)
    forms += cores
    if mime:
        forms += [("base64 (MIME)", broken) for form, core in cores if form == "base64" for broken in _mime(core)]
    seen: set[str] = set()
    unique = [(form, text) for form, text in forms if text and not (text in seen or seen.add(text))]  # type: ignore[func-returns-value]
    return sorted(unique, key=lambda item: -len(item[1]))


@dataclass(frozen=True, slots=True)
class SecretHit:
    """Where a secret was found: ``label`` names it (never its value), ``form`` the spelling."""

    label: str
    form: str
    line: int
    """The 1-based line of the data where the spelling starts (for a joined stream: its first event)."""
    joined: bool = False
    """Found only in a streamed answer's text joined from its deltas."""

    @property
    def where(self) -> str:
        if self.joined:
            return f"the streamed answer from line {self.line} (its deltas joined)"
        return f"line {self.line}"


def _json_unescaped(data: bytes) -> bytes:
    """``data`` with JSON string escapes undone, except line breaks (``\\n``, ``\\u000a``): lines keep their numbers."""

    def one(match: re.Match[bytes]) -> bytes:
        if match.group(3) is not None:
            return match.group(3)
        high = int(match.group(1), 16)
        if high in (0x0A, 0x0D):
            return match.group(0)
        if match.group(2) is not None:
            low = int(match.group(2), 16)
            if 0xD800 <= high < 0xDC00 and 0xDC00 <= low < 0xE000:
                return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)).encode()
            return _char(high) + (match.group(0)[6:] if low in (0x0A, 0x0D) else _char(low))
        return _char(high)

    return _JSON_ESCAPE.sub(one, data)


def _char(code: int) -> bytes:
    return chr(code).encode("utf-8", "surrogatepass")


def _percent_decoded(data: bytes) -> bytes:
    """``data`` with percent-escapes undone (either case), except line breaks, so lines keep their numbers."""
    kept = (b"0a", b"0A", b"0d", b"0D")
    return _PERCENT.sub(lambda m: m.group(0) if m.group(1) in kept else binascii.unhexlify(m.group(1)), data)


def _flat(data: bytes) -> tuple[bytes, list[int]]:
    """``data`` without line breaks (and the indentation after them), and where in it each real break was."""
    out: list[bytes] = []
    breaks: list[int] = []
    at = size = 0
    for match in _BREAK.finditer(data):
        out.append(data[at : match.start()])
        size += match.start() - at
        if data[match.start() : match.start() + 1] in (b"\r", b"\n"):
            breaks.append(size)
        at = match.end()
    out.append(data[at:])
    return b"".join(out), breaks


class _Needles:
    """What to look for, per secret: its spellings (without MIME's, which the flat views find) and its bare forms."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        self.spellings = {label: secret_spellings(value, mime=False) for label, value in secrets.items()}
        self.bare = {
            label: [("as is", value), ("as is", value.replace(" ", "+")), *base64_cores(value)]
            for label, value in secrets.items()
        }

    def exact(self, data: bytes, line_of: Callable[[int], int], joined: bool) -> SecretHit | None:
        for label, forms in self.spellings.items():
            for form, text in forms:
                at = data.find(text.encode())
                if at >= 0:
                    return SecretHit(label, form, line_of(at), joined)
        return None

    def bare_in(
        self, data: bytes, view: str, line_of: Callable[[int], int], joined: bool, *, base64_only: bool = False
    ) -> SecretHit | None:
        for label, forms in self.bare.items():
            for form, text in forms:
                if base64_only and not form.startswith("base64"):
                    continue
                at = data.find(text.encode())
                if at >= 0:
                    return SecretHit(label, view if form == "as is" else f"{form}, {view}", line_of(at), joined)
        return None


def _scan(data: bytes, needles: _Needles, line_base: int = 1, joined: bool = False) -> SecretHit | None:
    def line_of(view: bytes) -> Callable[[int], int]:
        if joined:  # a joined text's own line breaks say nothing about the file's lines
            return lambda at: line_base
        return lambda at: line_base + view.count(b"\n", 0, at)

    hit = needles.exact(data, line_of(data), joined)
    if hit is not None:
        return hit
    views = [("", data)]
    if b"\\" in data:
        once = _json_unescaped(data)
        views.append(("JSON-escaped", once))
        if b"\\" in once:
            views.append(("JSON-escaped twice", _json_unescaped(once)))
    if b"%" in data:
        views += [(f"URL-encoded {name}".rstrip(), _percent_decoded(view)) for name, view in list(views)]
    for name, view in views[1:]:
        hit = needles.bare_in(view, name, line_of(view), joined)
        if hit is not None:
            return hit
    for name, view in views:
        flat, breaks = _flat(view)
        where = f"line breaks removed{', ' + name if name else ''}"
        hit = needles.bare_in(flat, where, _line_after_breaks(breaks, line_base, joined), joined, base64_only=True)
        if hit is not None:
            return hit
    return None


def _line_after_breaks(breaks: list[int], line_base: int, joined: bool) -> Callable[[int], int]:
    if joined:
        return lambda at: line_base
    return lambda at: line_base + bisect.bisect_right(breaks, at)


def find_secret(data: bytes | str, secrets: Mapping[str, str]) -> SecretHit | None:
    """The first of ``secrets`` (label -> value) that ``data`` gives away, in any spelling; None when clean.

    The data is read as is, through decoding views, and as the text of every streamed answer in it
    joined from its SSE deltas. Linear in the data for each secret (a few passes).
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    live = {label: value for label, value in secrets.items() if value}
    if not live:
        return None
    needles = _Needles(live)
    hit = _scan(raw, needles)
    if hit is not None:
        return hit
    for first_line, text in joined_streams(raw):
        hit = _scan(text.encode("utf-8", "surrogatepass"), needles, first_line, joined=True)
        if hit is not None:
            return hit
    return None


def joined_streams(data: bytes) -> list[tuple[int, str]]:
    """The text of each streamed answer in ``data``: per stream (ended by ``data: [DONE]``) and per field
    (a choice's ``delta.content``, a tool call's ``arguments``, a Responses ``delta``...), every string
    the ``data:`` events carry, joined in order. ``(line of the stream's first event, text)``."""
    streams: list[tuple[int, str]] = []
    parts: dict[tuple[Any, ...], list[str]] = {}
    first = 0
    for match in _SSE_DATA.finditer(data):
        payload = match.group(1).strip()
        if payload == b"[DONE]":
            streams += [(first, "".join(texts)) for texts in parts.values()]
            parts = {}
            continue
        try:
            event = json.loads(payload)
        except ValueError:
            continue
        if not parts:
            first = data.count(b"\n", 0, match.start()) + 1
        for path, text in _strings(event, ()):
            parts.setdefault(path, []).append(text)
    streams += [(first, "".join(texts)) for texts in parts.values()]
    return [(line, text) for line, text in streams if text]


def _strings(value: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], str]]:
    """Every string in an event with a path that is the same for the same field in the next event:
    list items by their ``index`` (choices, tool calls), Responses deltas by output and content index."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            yield where, item
        elif isinstance(item, dict):
            extra = tuple(item.get(k) for k in ("output_index", "content_index", "item_id") if k in item)
            for key, child in reversed(list(item.items())):
                if key not in ("id", "object", "created", "model", "system_fingerprint", "type", "sequence_number"):
                    stack.append((child, (*where, *extra, key)))
        elif isinstance(item, list):
            for position, child in reversed(list(enumerate(item))):
                index = child.get("index", position) if isinstance(child, dict) else position
                stack.append((child, (*where, index)))


def credential_values(header_value: str) -> list[str]:
    """The secret(s) in a credential header's value: the value after its scheme, whatever its case
    (``Bearer``, ``BEARER``, ``Token``, ``Api-Key``...), or the whole value without a scheme; for
    ``Basic``, the encoded pair too, and its decoded ``user:password`` and password."""
    value = header_value.strip()
    match = _SCHEME.match(value)
    if match is None:
        return [value] if value else []
    scheme, credential = match.group(1).lower(), match.group(2)
    out = [credential]
    if scheme == "basic":
        try:
            pair = base64.b64decode(credential, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return out
        out.append(pair)
        if ":" in pair:
            out.append(pair.split(":", 1)[1])
    return [item for item in out if item]


def credential_params(query: str) -> list[str]:
    """The parameters of a URL's ``query`` that carry a credential by name (:data:`CREDENTIAL_PARAMS`), as given.

    Names are read as a server reads them: percent-decoded (``api%5Fkey``), in any case (``API_KEY``),
    ``-`` as ``_`` (``api-key``). Each name is listed once, in the order it first appears.
    """
    found: dict[str, None] = {}
    for name, _ in parse_qsl(query, keep_blank_values=True):
        if name.strip().lower().replace("-", "_") in CREDENTIAL_PARAMS:
            found.setdefault(name, None)
    return list(found)
