"""Header limits: uvicorn's httptools protocol with a bound on request-head count and size.

uvicorn (0.3x-0.5x) puts no limit on headers with httptools, and httptools buffers a header
value until it is complete, so the count and size are checked while parsing and the raw
bytes while the head is still arriving. Over a limit the client gets one OpenAI-shaped 431
and the connection is closed; the request is journaled and never reaches the app.
"""

from __future__ import annotations

import asyncio

import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from evaljig_gateway._errors import GatewayError
from evaljig_gateway._journal import Journal
from evaljig_gateway._limits import Limits

_STATUS_LINE = b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
#: A raw head may be this many times ``max_header_bytes`` (it also holds separators) before we stop reading it.
_RAW_SLACK = 2
#: How long a refused connection may go on sending (discarded) before it is closed.
_LINGER_S = 2.0


class _HeaderLimitError(Exception):
    """Raised from a parser callback to stop parsing; uvicorn turns it into ``send_400_response``."""


def bounded_protocol(limits: Limits, journal: Journal) -> type[asyncio.Protocol]:
    """An ``HttpToolsProtocol`` class enforcing ``limits.max_header_count`` / ``max_header_bytes``."""

    class BoundedHttpToolsProtocol(HttpToolsProtocol):
        _refusal: str | None = None
        _in_head = True
        _head_bytes = 0
        _raw_head_bytes = 0

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._in_head, self._head_bytes, self._raw_head_bytes = True, 0, 0

        def on_url(self, url: bytes) -> None:
            super().on_url(url)
            self._count(len(url))

        def on_header(self, name: bytes, value: bytes) -> None:
            super().on_header(name, value)
            if len(self.headers) > limits.max_header_count:
                self._refuse(f"more than {limits.max_header_count} request headers")
            self._count(len(name) + len(value))

        def on_headers_complete(self) -> None:
            self._in_head = False
            super().on_headers_complete()

        def data_received(self, data: bytes) -> None:
            if self._refusal is not None:
                return
            super().data_received(data)
            if self._in_head and self._refusal is None and not self.transport.is_closing():
                self._raw_head_bytes += len(data)
                if self._raw_head_bytes > _RAW_SLACK * limits.max_header_bytes:
                    self._refusal = self._too_big()
                    self.send_400_response("")

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
            if self._refusal is None:
                super().send_400_response(msg)
                return
            message = (
                f"Request header fields too large: {self._refusal} "
                "(evaljig-gateway serve --max-header-count / --max-header-bytes)."
            )
            body = orjson.dumps(GatewayError(431, message).body())
            head = b"content-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % len(body)
            self.transport.write(_STATUS_LINE + head + body)
            # a lingering close: closing with unread bytes would reset the connection and lose the 431,
            # so half-close, discard what still arrives (data_received ignores it) and close soon after
            if self.transport.can_write_eof():
                self.transport.write_eof()
                self.loop.call_later(_LINGER_S, self.transport.close)
            else:  # pragma: no cover - TCP transports can always half-close
                self.transport.close()
            journal.record(self._method(), self._path(), None, 431, 0, b"")

        def _method(self) -> str:
            try:
                return str(self.parser.get_method().decode("ascii", errors="replace"))
            except Exception:  # the request line itself was cut off
                return "?"

        def _path(self) -> str:
            return getattr(self, "url", b"").split(b"?", 1)[0][:200].decode("latin-1")

    return BoundedHttpToolsProtocol
