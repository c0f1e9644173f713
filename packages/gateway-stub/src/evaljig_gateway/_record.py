"""Recording: the gateway as a faithful proxy to an OpenAI-compatible upstream, keeping what it may replay.

Each API request is forwarded as sent (never with the client's own credentials: the upstream
gets ``Authorization: Bearer $VAR`` from ``--api-key-env``, or nothing), the upstream's answer
is read (a streamed one split into its SSE events) and answered to the client. The read is
bounded: what the upstream sends is counted after decompression and refused past
``max_answer_bytes`` (a 522 KB gzip answer can inflate to 512 MiB), and it stops the moment the
client leaves (an endless stream is not read on for nobody). Answers that are true of the
request — 2xx and the deterministic client errors 400/404/422 — are kept, each with its
cassette text serialised right away in a worker thread (so stopping is a join, however much
was recorded), in the order they are sent to clients; 401/403/408/409/429/5xx pass through but
are never kept, and an unreachable upstream answers 502 and keeps nothing. Nothing is written
here: the owner writes the cassette when the gateway stops, after the secret scan.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterable
from http.client import responses
from urllib.parse import urlsplit

import httpx

from evaljig_common import credential_values
from evaljig_gateway._cassette import (
    DEFAULT_MAX_CASSETTE_BYTES,
    SSE_TYPE,
    Exchange,
    Item,
    Secrets,
    item_text,
    kept_headers,
    loads_json,
    pretty_json,
    sse_events,
    sse_text,
)
from evaljig_gateway._errors import ClientGoneError, GatewayError
from evaljig_gateway._replies import Receive, Reply, until_disconnect

#: Statuses that say something true and repeatable about the request, so they are recorded.
RECORDED_STATUSES = frozenset({400, 404, 422})
#: Upstream timeouts: a real model may take minutes to answer a long request.
UPSTREAM_TIMEOUT = httpx.Timeout(600.0, connect=10.0)
#: Request headers whose values are credentials: scanned for at write time, never forwarded.
_CREDENTIAL_HEADERS = frozenset({b"authorization", b"api-key", b"x-api-key"})
#: A client credential shorter than this is a placeholder ("EMPTY", "none"), not a secret to look for.
MIN_SECRET_CHARS = 8
_FORWARDED_HEADERS = frozenset({b"content-type", b"accept"})


def check_upstream(url: str) -> str:
    """An OpenAI base URL including its ``/v1`` (``https://api.openai.com/v1``), without a trailing slash."""
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:  # checked before the URL is ever shown
        raise ValueError("--upstream must not carry credentials (user:password@); pass the key with --api-key-env")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"--upstream must be an http(s) URL such as https://api.openai.com/v1, got {url!r}")
    if parts.query or parts.fragment:
        raise ValueError(f"--upstream must be a base URL without query or fragment, got {url!r}")
    return url.rstrip("/")


class Recorder:
    """Forwards API requests to ``upstream`` and keeps the recordable exchanges in arrival-of-answer order."""

    def __init__(
        self, upstream: str, *, api_key_env: str | None = None, max_answer_bytes: int = DEFAULT_MAX_CASSETTE_BYTES
    ) -> None:
        self.upstream = check_upstream(upstream)
        self.api_key_env = api_key_env
        self.max_answer_bytes = max_answer_bytes
        self._key = os.environ.get(api_key_env, "") if api_key_env is not None else None
        if self._key is not None and not self._key.strip():  # unset or empty: a recording would get 401s
            raise ValueError(f"--api-key-env {api_key_env}: the environment variable is unset or empty")
        self.recorded: list[Item] = []
        """What was recorded, with its cassette text, in the order the answers were sent."""
        self._client_credentials: set[str] = set()
        self._client: httpx.AsyncClient | None = None

    def secrets(self) -> Secrets:
        """The upstream key and every client credential seen, by a label naming each (never its value)."""
        values = {f"a client credential #{i + 1}": value for i, value in enumerate(sorted(self._client_credentials))}
        if self._key is not None:
            values[f"the upstream key (${self.api_key_env})"] = self._key
        return values

    async def forward(
        self, method: str, path: str, raw: bytes, headers: Iterable[tuple[bytes, bytes]], receive: Receive
    ) -> tuple[Reply, Exchange | None]:
        """The upstream's answer to the client's request (``path`` from ``/v1/`` on, with its query), and the
        exchange kept for the cassette (None when it is not recorded). A client that leaves (``receive``: its
        ASGI channel, its body already read) stops the upstream read: ``ClientGoneError``."""
        sent = {b"content-type": b"application/json"} if raw else {}
        for name, value in headers:
            name = name.lower()
            if name in _CREDENTIAL_HEADERS:
                credentials = credential_values(value.decode("latin-1"))  # BEARER, Token, Basic...
                self._client_credentials.update(secret for secret in credentials if len(secret) >= MIN_SECRET_CHARS)
            elif name in _FORWARDED_HEADERS:
                sent[name] = value
        if self._key is not None:
            sent[b"authorization"] = f"Bearer {self._key}".encode()
        url = self.upstream + path[len("/v1") :]
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=UPSTREAM_TIMEOUT, follow_redirects=False)
        reading = asyncio.ensure_future(self._read(self._client, method, url, raw, sent))
        gone = asyncio.ensure_future(until_disconnect(receive))
        try:
            await asyncio.wait((reading, gone), return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
        if not reading.done():  # the client left: stop reading (the upstream connection is closed)
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reading
            raise ClientGoneError
        response, content = await reading
        reply, exchange = self._answer(method, path, raw, response, content)
        if exchange is None:
            return reply, None
        try:  # PyYAML's emitter is slow (about 1 MB/s): off the event loop, before the answer is sent
            text = await asyncio.to_thread(item_text, exchange)
        except ValueError:  # a text no YAML can hold: answered, not recorded
            return reply, None
        self.recorded.append((exchange, text))  # no await from here until the answer is sent: send order
        return reply, exchange

    async def _read(
        self, client: httpx.AsyncClient, method: str, url: str, raw: bytes, sent: dict[bytes, bytes]
    ) -> tuple[httpx.Response, bytes]:
        """The upstream's answer and its (decompressed) body, refused past ``max_answer_bytes``."""
        limit = self.max_answer_bytes
        try:
            async with client.stream(method, url, content=raw or None, headers=sent) as response:
                content = bytearray()
                async for chunk in response.aiter_bytes():
                    content += chunk
                    if len(content) > limit:
                        raise GatewayError(
                            502,
                            f"The upstream {self.upstream} sent an answer over the limit of {limit:,} bytes "
                            "(decompressed; --max-cassette-bytes): it was not passed on, nothing was recorded "
                            "(evaljig gateway recording).",
                            code="upstream_answer_too_large",
                        )
        except httpx.HTTPError as exc:
            reason = str(exc) or type(exc).__name__
            raise GatewayError(
                502,
                f"The upstream {self.upstream} could not be reached: {type(exc).__name__}: {reason} "
                "(evaljig gateway recording; nothing was recorded).",
                code="upstream_unreachable",
            ) from None
        return response, bytes(content)

    def _answer(
        self, method: str, path: str, raw: bytes, response: httpx.Response, content: bytes | None = None
    ) -> tuple[Reply, Exchange | None]:
        """The reply to send and the exchange to keep (None: not recordable); nothing is kept here."""
        kept = kept_headers(response.headers.items())
        content_type = next((v for n, v in kept if n == "content-type"), "application/json")
        others = [(n.encode(), v.encode()) for n, v in kept if n != "content-type"]
        content = response.content if content is None else content
        body_text: str | None = None
        if content_type.startswith(SSE_TYPE):
            with contextlib.suppress(UnicodeDecodeError):  # not UTF-8: passed on as it came, not recorded
                body_text = sse_text(content)
            events = sse_events(body_text) if body_text is not None else [content]
            reply = Reply(response.status_code, b"", content_type.encode(), others, events)
        else:
            body_text = _json_or_text(content, "json" in content_type)
            reply = Reply(response.status_code, content, content_type.encode(), others)
        status = response.status_code
        if body_text is None or not (200 <= status < 300 or status in RECORDED_STATUSES):
            return reply, None
        # the app parsed the request's JSON (a 400 otherwise) before forwarding it, so this parse succeeds
        request_text = pretty_json(loads_json(raw)) if raw.strip() else ""
        return reply, Exchange(method, path, request_text, status, kept, body_text, responses.get(status, ""))

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _json_or_text(content: bytes, json_type: bool) -> str | None:
    """A JSON answer pretty-printed, other text as it is; None for what cannot be recorded truly
    (bytes that are not UTF-8, a body labelled JSON that is not)."""
    try:
        text = content.decode("utf-8")
        return pretty_json(loads_json(text)) if text.strip() else text
    except UnicodeDecodeError:
        return None
    except ValueError:  # not JSON
        return None if json_type else text
