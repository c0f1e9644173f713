"""The request head: uvicorn's httptools protocol with bounds on its size and time, and journaled refusals.

uvicorn (0.3x-0.5x) puts no limit on headers with httptools, and httptools buffers a header
value until it is complete, so the count and size are checked while parsing and the raw
bytes while the head is still arriving. Neither of uvicorn's HTTP implementations (httptools
or h11) times out a request head either: ``timeout_keep_alive`` only runs between requests
and is cancelled by the first byte of the next one, so a client sending half a head held its
connection (and a descriptor) for ever. Here a head must be complete within
``limits.max_header_wait_ms`` of the connection opening or of its first byte.

Every refusal is one OpenAI-shaped JSON error followed by a lingering close, and is journaled
with the method and path when they are known (they never reach the app): 431 for a head over
the limits, 408 for a head too slow, 400 for a request httptools cannot parse (a bad request
line, header or chunked framing). A framing error in the body of a request the app is already
reading is journaled by the app, as 400, when it sees the connection go.
"""

from __future__ import annotations

import asyncio

import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from evaljig_gateway._app import FRAMING_ERROR
from evaljig_gateway._errors import GatewayError
from evaljig_gateway._journal import Journal
from evaljig_gateway._limits import Limits

_STATUS_LINES = {
    400: b"HTTP/1.1 400 Bad Request\r\n",
    408: b"HTTP/1.1 408 Request Timeout\r\n",
    431: b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
}
#: A raw head may be this many times ``max_header_bytes`` (it also holds separators) before we stop reading it.
_RAW_SLACK = 2
#: How long a refused connection may go on sending (discarded) before it is closed.
_LINGER_S = 2.0
#: Journaled as the method or path of a request that was cut off before they were known.
UNKNOWN = "?"


class _HeaderLimitError(Exception):
    """Raised from a parser callback to stop parsing; uvicorn turns it into ``send_400_response``."""


def bounded_protocol(limits: Limits, journal: Journal) -> type[asyncio.Protocol]:
    """An ``HttpToolsProtocol`` class enforcing ``limits.max_header_count`` / ``max_header_bytes`` /
    ``max_header_wait_ms`` and journaling what it refuses."""

    class BoundedHttpToolsProtocol(HttpToolsProtocol):
        _refusal: str | None = None
        _answered = False
        _in_head = True
        _message_open = False
        _url_seen = False
        _head_bytes = 0
        _raw_head_bytes = 0
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm_head_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_head_timer()
            super().connection_lost(exc)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._in_head, self._message_open, self._url_seen = True, True, False
            self._head_bytes = self._raw_head_bytes = 0
            self._arm_head_timer()  # a keep-alive connection's next request: the clock starts at its first byte

        def on_url(self, url: bytes) -> None:
            super().on_url(url)
            self._url_seen = True  # so the method before it was parsed
            self._count(len(url))

        def on_header(self, name: bytes, value: bytes) -> None:
            super().on_header(name, value)
            if len(self.headers) > limits.max_header_count:
                self._refuse(f"more than {limits.max_header_count} request headers")
            self._count(len(name) + len(value))

        def on_headers_complete(self) -> None:
            self._in_head = False
            self._disarm_head_timer()
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._message_open = False
            super().on_message_complete()

        def data_received(self, data: bytes) -> None:
            if self._answered:
                return  # a refused connection lingers: what still arrives is discarded
            super().data_received(data)
            if self._in_head and not self._answered and not self.transport.is_closing():
                self._raw_head_bytes += len(data)
                if self._raw_head_bytes > _RAW_SLACK * limits.max_header_bytes:
                    self._refusal = self._too_big()
                    self.send_400_response("")

        def _arm_head_timer(self) -> None:
            if self._head_timer is None:
                self._head_timer = self.loop.call_later(limits.max_header_wait_ms / 1000, self._head_timed_out)

        def _disarm_head_timer(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_timed_out(self) -> None:
            self._head_timer = None
            if self._answered or self.transport.is_closing():
                return
            if not self._message_open:  # nothing of a request arrived: close like an idle keep-alive
                self.transport.close()
                return
            message = (
                f"Request timeout: the request line and headers did not arrive within {limits.max_header_wait_ms} ms "
                "(evaljig-gateway serve --max-header-wait-ms)."
            )
            self._answer(408, message)

        def _count(self, size: int) -> None:
            self._head_bytes += size
            if self._head_bytes > limits.max_header_bytes:
                self._refuse(self._too_big())

        def _too_big(self) -> str:
            return f"request line and headers over {limits.max_header_bytes} bytes"

        def _refuse(self, reason: str) -> None:
            self._refusal = reason
            raise _HeaderLimitError(reason)

        def send_400_response(self, msg: str) -> None:
            """uvicorn's answer to a request httptools could not parse (or to a ``_HeaderLimitError``)."""
            if self._refusal is not None:
                message = (
                    f"Request header fields too large: {self._refusal} "
                    "(evaljig-gateway serve --max-header-count / --max-header-bytes)."
                )
                self._answer(431, message)
                return
            cycle = self.cycle
            running = cycle is not None and not cycle.response_complete and not self.pipeline
            reading_body = running and cycle.more_body
            message = (
                "Invalid HTTP request: the request line, headers or body framing (Content-Length, "
                "Transfer-Encoding, chunk sizes) could not be parsed."
            )
            self._answer(400, message, journaled=not reading_body)
            if running:  # the app has a request of this connection: it stops (and may not write after the 400)
                if reading_body:  # its body is what could not be parsed: the app journals the 400 as it stops
                    cycle.scope[FRAMING_ERROR] = True  # type: ignore[literal-required]
                cycle.disconnected = True
                cycle.message_event.set()

        def _answer(self, status: int, message: str, *, journaled: bool = True) -> None:
            """One JSON error, then a lingering close: closing with unread bytes would reset the
            connection and lose the answer, so half-close, discard what still arrives, close soon after."""
            self._answered = True
            self._disarm_head_timer()
            body = orjson.dumps(GatewayError(status, message).body())
            head = b"content-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % len(body)
            self.transport.write(_STATUS_LINES[status] + head + body)
            if self.transport.can_write_eof():
                self.transport.write_eof()
                self.loop.call_later(_LINGER_S, self.transport.close)
            else:  # pragma: no cover - TCP transports can always half-close
                self.transport.close()
            if journaled:
                journal.record(self._method(), self._path(), None, status, 0, b"")

        def _method(self) -> str:
            if not (self._message_open and self._url_seen):  # httptools answers DELETE (0) before it knows
                return UNKNOWN
            try:
                return str(self.parser.get_method().decode("ascii", errors="replace"))
            except Exception:  # the request line itself was cut off
                return UNKNOWN

        def _path(self) -> str:
            url = getattr(self, "url", b"") if self._message_open and self._url_seen else b""
            return url.split(b"?", 1)[0][:200].decode("latin-1") or UNKNOWN

    return BoundedHttpToolsProtocol
