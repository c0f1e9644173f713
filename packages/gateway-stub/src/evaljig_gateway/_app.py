"""The gateway as a plain ASGI application: routing, the journal, behaviours, and where handlers run.

A dict of routes and direct ASGI messages instead of a framework router: the hot path is one body
read, one JSON parse, one plain handler call (``_chat.handle`` ...), one JSON dump and one journal
append. Each endpoint is a module with a plain ``handle(request) -> Reply``.

Where a handler runs bounds what one request costs the others. A small chat or Responses request
without log-probabilities, tools or a JSON format (the plain path: its work is bounded by its body,
to tens of milliseconds at most for 16 KiB of prompt) runs in the event loop. Anything else
(embeddings, completions, log-probabilities, schema-generated answers, a body over
``INLINE_BODY_BYTES``, a cassette miss's explanation) runs in a daemon thread of its own while the
loop goes on serving: Python hands the GIL over every few milliseconds (``sys.getswitchinterval``),
so a concurrent plain client waits milliseconds, not the heavy request's whole time. The thread's
result is dropped if its client leaves (499) or the gateway stops (503); being a daemon, it never
holds the process up at exit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import re
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl

import orjson

from evaljig_gateway import _chat, _completions, _embeddings, _faults, _models, _responses, _validation
from evaljig_gateway._behaviours import BEHAVIOUR_TABLE, PLAIN, behaviour_for
from evaljig_gateway._content import AnswerKey
from evaljig_gateway._errors import ClientGoneError, GatewayError
from evaljig_gateway._journal import Journal, call_json
from evaljig_gateway._limits import Limits, check_model_name
from evaljig_gateway._miss import CODE as MISS_CODE
from evaljig_gateway._replies import Receive, Reply, Scope, Send, json_reply, until_disconnect
from evaljig_gateway._request import Request
from evaljig_gateway._token_window import TokenWindows

if TYPE_CHECKING:
    from evaljig_gateway._record import Recorder
    from evaljig_gateway._replay import Replayer

T = TypeVar("T")

#: Sent as ``retry-after-ms`` on 429/500 so SDK retries (which honour it) take milliseconds.
DEFAULT_RETRY_AFTER_MS = 1

#: The gateway's own endpoints; they are not journaled (nor counted in ``served``).
CONTROL_PREFIX = "/_gateway/"
#: OpenAI's endpoints: every answer under it carries an ``x-request-id``.
API_PREFIX = "/v1/"

_log = logging.getLogger(__name__)

_MODEL_ROUTES: dict[str, Callable[[Request], Reply]] = {
    "/v1/chat/completions": _chat.handle,
    "/v1/completions": _completions.handle,
    "/v1/embeddings": _embeddings.handle,
    "/v1/responses": _responses.handle,
}
#: Endpoints whose small requests are answered in the event loop (see the module docstring).
_INLINE_PATHS = frozenset({"/v1/chat/completions", "/v1/responses"})
#: A chat or Responses body up to this size is answered in the event loop, unless it holds one of ``_HEAVY``.
INLINE_BODY_BYTES = 16 * 1024
#: Fields whose work is bounded by a budget rather than by the body (log-probabilities; schema instances and
#: tool arguments, up to ``Limits.max_generation_steps``, 50-100 ms): a body naming one runs in a worker thread
#: (a plain answer's ``"text"`` content parts too: a false alarm only costs a thread). One pass over the body.
_HEAVY = re.compile(rb'"(?:logprobs|response_format|tools|functions|text)"')


@dataclass(slots=True)
class _Call:
    """What the journal records of a request, filled in as the request is understood."""

    epoch: int
    """The journal's epoch when the request arrived (a reset in between keeps it out of the next test's calls)."""
    model: str | None = None
    attempt: int = 0
    raw: bytes = b""
    miss: str | None = None
    """A cassette miss's explanation (the 404's message), journaled with the call."""


#: Journaled for a request that got no answer because the client left first.
NO_ANSWER = 499
#: OpenAI's message for a 500, which the gateway's own 500s begin with.
_INTERNAL = "The server had an error while processing your request"


class GatewayApp:
    """OpenAI-compatible ASGI app; see ``_behaviours`` for what each model name does."""

    def __init__(
        self,
        *,
        answers: AnswerKey | None = None,
        journal: Journal | None = None,
        limits: Limits | None = None,
        retry_after_ms: int = DEFAULT_RETRY_AFTER_MS,
        replayer: Replayer | None = None,
        recorder: Recorder | None = None,
    ) -> None:
        """``replayer`` answers API requests from a cassette (with ``recorder`` as well: misses are forwarded
        and recorded); ``recorder`` alone forwards every API request to its upstream and records it."""
        self.answers = answers or AnswerKey()
        self.replayer, self.recorder = replayer, recorder
        self._cassette_mode = replayer is not None or recorder is not None
        self.journal = journal or Journal()
        self.limits = limits or Limits()
        self.retry_after_ms = retry_after_ms
        self.in_flight = 0
        """Model requests being answered right now (read by ``GET /_gateway/status``)."""
        self.windows = TokenWindows()
        """Tokens spent per model in the current ``tpm-<n>`` window (``advance`` ends it, a reset too)."""
        self._id_epoch, self._id_count = 0, 0
        self.reopen()

    def reopen(self) -> None:
        """Serve again after ``close``."""
        self._closing = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    def close(self) -> None:
        """Answer held requests (``stall``, ``slow-<ms>``) with 503 now; safe to call from any thread."""
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: set it from here
                self._loop.call_soon_threadsafe(self._closing.set)
                return
        self._closing.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "lifespan":
            await _lifespan(receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read the body, let ``_from_cassette`` (an API request in cassette mode) or ``_synthetic`` make the reply,
        journal the call, send the reply (a model request is counted in ``in_flight`` meanwhile).

        Whatever goes wrong answers like OpenAI and is journaled: a ``GatewayError`` as itself, a
        client that left as 499 (or the 400 it was sent for bad framing), shutdown as 503, a bug as 500.
        """
        method: str = scope["method"]
        path: str = scope["path"]
        started = time.monotonic_ns()  # the journal entry's start (its end is when it is recorded)
        call = _Call(self.journal.epoch)
        cassette = self._cassette_mode and path.startswith(API_PREFIX)
        model_request = cassette or path in _MODEL_ROUTES
        request_id = self._request_id(call.epoch) if path.startswith(API_PREFIX) else None
        self.in_flight += model_request
        try:
            self._check_head(scope)
            call.raw = await self._read_body(receive)
            answer = self._from_cassette if cassette else self._synthetic
            reply = await answer(scope, receive, call)
        except GatewayError as exc:
            reply = _error_reply(exc)
            call.miss = exc.message if exc.code == MISS_CODE else None
        except ClientGoneError:
            self.journal.record(
                method, path, call.model, NO_ANSWER, call.attempt, call.raw, call.epoch, started_ns=started
            )
            return
        except asyncio.CancelledError:
            # uvicorn cancels what is still running a second into shutdown (a body still arriving):
            # the task ends right here, so answer 503 and journal it rather than vanish without a trace
            reply = _error_reply(_shutting_down())
        except Exception as exc:  # last resort: a bug still answers like OpenAI and is journaled
            _log.exception("evaljig gateway: unexpected error answering %s %s", method, path)
            what = f"unexpected {type(exc).__name__}"  # the type only: the message may quote the request
            reply = _error_reply(GatewayError(500, f"{_INTERNAL} (evaljig gateway: {what})."))
        finally:
            self.in_flight -= model_request
        if request_id is not None:
            reply.headers.append((b"x-request-id", request_id))
        if not path.startswith(CONTROL_PREFIX):
            # journaled before it is sent: a client that has its answer finds the call in the journal
            self.journal.record(
                method,
                path,
                call.model,
                reply.status,
                call.attempt,
                call.raw,
                call.epoch,
                miss=call.miss,
                started_ns=started,
                reply_headers=reply.headers,
                cut=reply.end != "whole",
                error_code=_error_code(reply) if reply.status >= 400 else None,
            )
        await _send(send, reply)

    async def _synthetic(self, scope: Scope, receive: Receive, call: _Call) -> Reply:
        """The gateway's own answer: a model endpoint's generated reply in its behaviour, or a control endpoint."""
        method: str = scope["method"]
        path: str = scope["path"]
        handler = _MODEL_ROUTES.get(path)
        if handler is None:
            return self._control(method, path, scope)
        if method != "POST":
            raise GatewayError(405, f"Method {method} is not allowed on {path}; use POST.")
        if path in _INLINE_PATHS and len(call.raw) <= INLINE_BODY_BYTES and _HEAVY.search(call.raw) is None:
            reply = self._answer(handler, call)
        else:
            reply = await self._in_thread(lambda: self._answer(handler, call), receive)
        assert call.model is not None  # set by ``_answer`` before the handler ran
        # counted only once the request is valid: a 400 must not use up fail-once's failure
        call.attempt = self.journal.next_attempt(call.model, call.epoch)
        if behaviour_for(call.model) is PLAIN:
            return reply
        return await self._apply_behaviour(call.model, call.attempt, reply, receive)

    def _answer(self, handler: Callable[[Request], Reply], call: _Call) -> Reply:
        """Parse the body, check the model name (before it is kept anywhere: journal, counters), run ``handler``."""
        body, model = _validation.body_and_model(call.raw)
        check_model_name(model, self.limits)
        call.model = model
        return handler(Request(call.raw, body, model, self.answers, self.limits))

    async def _from_cassette(self, scope: Scope, receive: Receive, call: _Call) -> Reply:
        """An API request answered from the cassette (replay) or by the upstream (record, or a replay miss
        with ``--on-miss record``). Apart from ``_synthetic`` so synthetic serving pays nothing for it."""
        method: str = scope["method"]
        query: bytes = scope.get("query_string", b"")
        target = f"{scope['path']}?{query.decode('latin-1')}" if query else scope["path"]
        body = _validation.parse_json(call.raw) if call.raw.strip() else None
        name = body.get("model") if isinstance(body, dict) else None
        if isinstance(name, str):
            check_model_name(name, self.limits)
            call.model = name
        replayer, recorder = self.replayer, self.recorder
        if replayer is None:  # recording: a faithful proxy, behaviours are not applied
            assert recorder is not None
            reply, _ = await recorder.forward(method, target, call.raw, scope["headers"], receive)
            return reply
        key = replayer.key(method, target, body)
        if replayer.holds(key) and (recorder is None or not replayer.to_forward(key)):
            # the next recording, wrapped in the model's behaviour; a call the behaviour answers itself (a
            # failure, ``bad-request``, ``stall``) does not use up a recording: ``fail-once`` answers 500, then
            # the first recording
            model = call.model
            if model is not None:
                call.attempt = self.journal.next_attempt(model, call.epoch)
                behaviour = behaviour_for(model)
                if behaviour.stall or behaviour.bad_request or behaviour.failure_status_for(call.attempt) is not None:
                    return await self._apply_behaviour(model, call.attempt, Reply(200, b""), receive)  # raises
            recorded = replayer.answer(key)
            return recorded if model is None else await self._apply_behaviour(model, call.attempt, recorded, receive)
        if recorder is None:
            raise await self._in_thread(lambda: replayer.miss(key), receive)
        replayer.forwarding(key, +1)
        try:
            reply, exchange = await recorder.forward(method, target, call.raw, scope["headers"], receive)
            if exchange is not None:  # filed as used in the step that sends it: replay order = send order
                replayer.add(exchange, used=True)
        finally:
            replayer.forwarding(key, -1)
        return reply

    async def aclose(self) -> None:
        """Release what the app holds in its event loop (the recorder's upstream connections)."""
        if self.recorder is not None:
            await self.recorder.aclose()

    def _request_id(self, epoch: int) -> bytes:
        """``req_`` + 32 hex digits counting API requests (by arrival) since the journal's last reset.

        Real servers send a random id; this one is deterministic, so the same test sends back
        the same bytes on every run, yet each request of a test has its own id.
        """
        if epoch != self._id_epoch:
            self._id_epoch, self._id_count = epoch, 0
        self._id_count += 1
        return b"req_%032x" % self._id_count

    async def _in_thread(self, work: Callable[[], T], receive: Receive) -> T:
        """``work()`` in a daemon thread of its own while the loop goes on serving (see the module docstring).

        Its client leaving meanwhile is a 499, the gateway closing a 503; the thread's result is then dropped.
        """
        outcome: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            try:
                outcome.set_result(work())
            except BaseException as exc:  # handed to the request's task, which answers for it
                outcome.set_exception(exc)

        done = asyncio.wrap_future(outcome)  # set in the loop once the thread is done (not if the loop has closed)
        threading.Thread(target=run, name="gateway-work", daemon=True).start()
        gone = asyncio.ensure_future(receive())
        try:  # waiting does not cancel ``done``: the thread could not hand its outcome over
            await self._hold(asyncio.wait((done, gone), return_when=asyncio.FIRST_COMPLETED))
        finally:
            gone.cancel()
        if done.done():
            return done.result()
        raise ClientGoneError

    def _check_head(self, scope: Scope) -> None:
        """431 for more than ``limits.max_header_count`` headers, or a path and headers over ``max_header_bytes``;
        413 for a ``content-length`` over ``max_body_bytes``. One pass over the headers."""
        headers = scope["headers"]
        limits = self.limits
        if len(headers) > limits.max_header_count:
            raise _header_error(f"more than {limits.max_header_count} request headers")
        size = len(scope["raw_path"] or b"")
        for name, value in headers:
            size += len(name) + len(value)
            if name == b"content-length" and value.isdigit() and int(value) > limits.max_body_bytes:
                raise _too_large(limits.max_body_bytes)
        if size > limits.max_header_bytes:
            raise _header_error(f"a request line and headers over {limits.max_header_bytes} bytes")

    async def _read_body(self, receive: Receive) -> bytes:
        """The request body, read up to ``limits.max_body_bytes`` (most bodies arrive in one message)."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientGoneError
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > self.limits.max_body_bytes:
                raise _too_large(self.limits.max_body_bytes)
            if not message.get("more_body", False):
                return b"".join([*chunks, chunk]) if chunks else chunk
            chunks.append(chunk)

    async def _apply_behaviour(self, model: str, attempt: int, reply: Reply, receive: Receive) -> Reply:
        behaviour = behaviour_for(model)
        if behaviour.stall:
            await self._hold(until_disconnect(receive))
            raise ClientGoneError
        if behaviour.delay_ms:
            await self._hold(asyncio.sleep(behaviour.delay_ms / 1000))
        status = behaviour.failure_status_for(attempt)
        if status is not None:
            raise self._failure(status, model, attempt)
        if behaviour.bad_request:
            message = f"Model '{model}' rejects every request (evaljig gateway bad-request)."
            raise GatewayError(400, message, param="model", code="bad_request")
        if behaviour.tokens_per_window is not None:
            self._spend_tokens(model, behaviour.tokens_per_window, reply.tokens)
        if behaviour.malformed:
            body = reply.content
            return Reply(200, body[: max(1, len(body) // 2)])
        if behaviour.reshapes_stream:
            return _faults.reshape(reply, behaviour)
        return reply

    async def _hold(self, wait: Awaitable[Any]) -> None:
        """Await ``wait`` unless the gateway closes first (then answer 503, so shutdown never waits on us)."""
        self._loop = asyncio.get_running_loop()
        waiting = asyncio.ensure_future(wait)
        closing = asyncio.ensure_future(self._closing.wait())
        try:
            await asyncio.wait((waiting, closing), return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()
            closing.cancel()
        if self._closing.is_set():
            raise _shutting_down()

    def _failure(self, status: int, model: str, attempt: int) -> GatewayError:
        if status != 429:
            message = f"{_INTERNAL} (evaljig gateway: '{model}' fails call {attempt})."
            return GatewayError(status, message, headers=self._retry_headers({}))
        message = (
            f"Rate limit reached for {model} in organization org-evaljig on requests per min (RPM): Limit 60, "
            f"Used 60, Requested 1. Please try again in {self.retry_after_ms}ms. (evaljig gateway, call {attempt})"
        )
        return GatewayError(429, message, headers=self._retry_headers({b"requests": 60, b"tokens": 150000}))

    def _spend_tokens(self, model: str, limit: int, tokens: int) -> None:
        """``tpm-<n>``: spend the reply's tokens, or answer OpenAI's tokens-per-minute 429 once ``limit`` is spent.

        The reply that crosses the limit is still answered (its tokens were not known before it was made):
        from the next call on, every call is a 429 until the window ends (``advance``, ``reset``).
        """
        epoch = self.journal.epoch
        used = self.windows.spent(model, epoch)
        if used < limit:
            self.windows.spend(model, tokens, epoch)
            return
        message = (
            f"Rate limit reached for {model} in organization org-evaljig on tokens per min (TPM): Limit {limit}, "
            f"Used {used}, Requested {tokens}. Please try again in {self.retry_after_ms}ms. "
            "Visit https://platform.openai.com/account/rate-limits to learn more."
        )
        # code: rate_limit_exceeded, as every 429
        raise GatewayError(429, message, headers=self._retry_headers({b"tokens": limit}), type="tokens")

    def _retry_headers(self, limits: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
        """The headers of a 429 or 500: the wait it asks for (``retry-after`` in whole seconds, rounded up), and
        OpenAI's ``x-ratelimit-*-<unit>`` trio (that limit, none left, reset after the wait) for each of ``limits``."""
        ms = self.retry_after_ms
        headers = [(b"retry-after-ms", str(ms).encode()), (b"retry-after", str(-(-ms // 1000)).encode())]
        for unit, limit in limits.items():
            headers += [
                (b"x-ratelimit-limit-" + unit, str(limit).encode()),
                (b"x-ratelimit-remaining-" + unit, b"0"),
                (b"x-ratelimit-reset-" + unit, f"{ms}ms".encode()),
            ]
        return headers

    def _control(self, method: str, path: str, scope: Scope) -> Reply:
        """Model listing and the gateway's own ``/_gateway/*`` endpoints."""
        if method == "GET" and (path == "/v1/models" or (path.startswith(_models.PREFIX) and path != _models.PREFIX)):
            return _models.handle(path)
        if path == "/_gateway/calls" and method == "GET":
            pairs = parse_qsl(scope.get("query_string", b"").decode(errors="replace"), keep_blank_values=True)
            query = dict(reversed(pairs))  # a name given twice: its first value counts
            limit = _limit_of(query.get("limit"))
            calls = self.journal.calls(model=query.get("model"), path=query.get("path"), limit=limit)
            dropped = orjson.dumps(self.journal.dropped)
            return Reply(200, b'{"calls":[' + b",".join(map(call_json, calls)) + b'],"dropped":' + dropped + b"}")
        if path == "/_gateway/status" and method == "GET":
            return json_reply({"in_flight": self.in_flight, **self.journal.stats()})
        if path == "/_gateway/reset" and method == "POST":
            self.journal.reset()
            if self.replayer is not None:
                self.replayer.reset()
            return json_reply({"reset": True})
        if path == "/_gateway/advance" and method == "POST":
            self.windows.advance()
            return json_reply({"advanced": True})
        if path == "/_gateway/behaviours" and method == "GET":
            return json_reply([{"token": t, "behaviour": b} for t, b in BEHAVIOUR_TABLE])
        raise GatewayError(404, f"Unknown path {method} {path}.")


def _shutting_down() -> GatewayError:
    return GatewayError(503, "The evaljig gateway is shutting down.", code="shutting_down")


def _limit_of(text: str | None) -> int | None:
    """``?limit=N``: the newest N calls; anything but a positive integer is a 400."""
    if text is None:
        return None
    if not (text.isascii() and text.isdigit() and len(text) <= 9 and int(text) >= 1):
        shown = text[:40].encode("unicode_escape").decode()
        message = f"Invalid value for 'limit': expected a positive integer, got '{shown}'."
        raise GatewayError(400, message, param="limit")
    return int(text)


def _error_code(reply: Reply) -> str | None:
    """An error answer's ``error.code`` (OpenAI's shape), for the journal; None when it has none."""
    try:
        error = orjson.loads(reply.content).get("error")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None


def _error_reply(error: GatewayError) -> Reply:
    return Reply(error.status, orjson.dumps(error.body()), headers=error.headers)


def _header_error(what: str) -> GatewayError:
    return GatewayError(431, f"Request header fields too large: {what}.")


def _too_large(limit: int) -> GatewayError:
    return GatewayError(413, f"The request body exceeds the gateway limit of {limit} bytes.")


async def _send(send: Send, reply: Reply) -> None:
    headers = [(b"content-type", reply.content_type), *reply.headers]
    if reply.events is None:
        headers.append((b"content-length", b"%d" % len(reply.body)))
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        await send({"type": "http.response.body", "body": reply.body})
        return
    headers.append((b"cache-control", b"no-cache"))
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    for event in reply.events:
        await send({"type": "http.response.body", "body": event, "more_body": True})
    if reply.end != "drop":  # a dropped body is never ended: the server closes the connection mid-body (``drop-<n>``)
        await send({"type": "http.response.body", "body": b""})


async def _lifespan(receive: Receive, send: Send) -> None:
    """Complete the lifespan's startup and its shutdown: the app holds nothing that needs them."""
    while True:
        kind = (await receive())["type"]  # lifespan.startup, then lifespan.shutdown
        await send({"type": f"{kind}.complete"})
        if kind == "lifespan.shutdown":
            return
