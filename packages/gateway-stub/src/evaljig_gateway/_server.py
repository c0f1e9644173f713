"""Running the gateway: a background uvicorn server on a port the OS picked beforehand."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self, cast

import uvicorn

from evaljig_common import EvaljigError
from evaljig_gateway._answers import load_answer_key
from evaljig_gateway._app import DEFAULT_RETRY_AFTER_MS, GatewayApp
from evaljig_gateway._content import AnswerKey
from evaljig_gateway._journal import Call, Journal
from evaljig_gateway._limits import Limits
from evaljig_gateway._tape import Record, Replay, Tape, open_tape

LOOPBACK = "127.0.0.1"
_START_TIMEOUT_S = 20.0


class GatewayStartError(EvaljigError, RuntimeError):
    """The server could not bind or did not come up."""


def bind_socket(host: str = LOOPBACK, port: int = 0) -> socket.socket:
    """Bind (and listen) before the server starts, so the port is known and owned."""
    try:  # SO_REUSEADDR set (on POSIX), closed again if the bind fails
        return socket.create_server((host, port), backlog=2048)
    except OSError as exc:
        raise GatewayStartError(f"cannot bind {host}:{port}: {exc.strerror or exc}") from exc


def uvicorn_config(app: GatewayApp) -> uvicorn.Config:
    """Fast, quiet settings: httptools, uvloop where present (uvicorn's default loop), no access log, no lifespan.

    uvicorn's own options bound the transport: idle keep-alive connections close after 30 s, and a
    request httptools cannot parse is answered 400 by uvicorn itself (not journaled: it never
    reaches the app). Header count and size are checked by the app (431, journaled)."""
    return uvicorn.Config(
        app,
        http="httptools",
        lifespan="off",
        access_log=False,
        log_level="warning",
        timeout_graceful_shutdown=1,
        timeout_keep_alive=30,
        proxy_headers=False,
        server_header=False,
        date_header=False,
    )


class _Server(uvicorn.Server):
    """uvicorn's server, releasing the app's upstream connections in its own event loop once it has stopped."""

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().serve(sockets=sockets)
        finally:
            await cast(GatewayApp, self.config.app).aclose()  # the app ``uvicorn_config`` was given


class Gateway:
    """``with Gateway() as gw: client(base_url=gw.base_url)`` — a live gateway on loopback.

    With ``tape=Replay(path)`` it answers API requests from a cassette, with ``tape=Record(path, upstream=url)``
    it forwards them to a real server and writes the cassette when it stops; see docs/gateway.md.
    """

    def __init__(
        self,
        *,
        host: str = LOOPBACK,
        port: int = 0,
        answers: AnswerKey | Mapping[str, str | Mapping[str, Any]] | Path | None = None,
        limits: Limits | None = None,
        journal: Journal | None = None,
        tape: Replay | Record | None = None,
        retry_after_ms: int = DEFAULT_RETRY_AFTER_MS,
    ) -> None:
        """Options grouped as httpx groups its own: ``limits=Limits(...)``, ``journal=Journal(capacity,
        sink=path, ...)``, one ``tape=Replay(path, ...)`` or ``tape=Record(path, upstream=url, ...)``."""
        if tape is not None and answers is not None:
            raise ValueError("an answer key has no use with --replay or --record: the cassette or upstream answers")
        self.tape: Tape | None = open_tape(tape)
        self.host = host
        self._requested_port = port
        self.journal = journal if journal is not None else Journal()
        self.app = GatewayApp(
            answers=_answer_key(answers),
            journal=self.journal,
            limits=limits,
            retry_after_ms=retry_after_ms,
            replayer=self.tape.replayer if self.tape else None,
            recorder=self.tape.recorder if self.tape else None,
        )
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (no ``/v1``)."""
        if not self.port:
            raise GatewayStartError("the gateway is not running")
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, ``http://127.0.0.1:<port>/v1``."""
        return f"{self.url}/v1"

    def start(self) -> Self:
        self.app.reopen()
        sock = bind_socket(self.host, self._requested_port)
        self.port = sock.getsockname()[1]
        server = _Server(uvicorn_config(self.app))
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name=f"gateway-{self.port}", daemon=True
        )
        thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                sock.close()
                raise GatewayStartError(f"the gateway on {self.host}:{self.port} did not start")
            time.sleep(0.005)
        self._server, self._thread = server, thread
        return self

    def stop(self) -> None:
        """Stop serving: held requests (``stall``, ``slow-<ms>``) answer 503, anything still running after
        a second is cancelled; all of them are journaled before this returns. A recording gateway then
        writes its cassette (``CassetteError``, and nothing written, if a secret is in it)."""
        if self._server is not None and self._thread is not None:
            self.app.close()
            self._server.should_exit = True
            self._thread.join(timeout=10)
        self._server = self._thread = None
        self.journal.close()
        if self.tape is not None:
            self.tape.finish()

    @property
    def recorded(self) -> int:
        """Exchanges recorded so far (kept until the stop that writes them, then those written)."""
        if self.tape is None or self.tape.recorder is None:
            return 0
        return len(self.tape.recorder.recorded) or self.tape.written

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def calls(self, model: str | None = None, path: str | None = None, limit: int | None = None) -> list[Call]:
        """Journaled calls, oldest first, optionally for one model name and/or path; ``limit``: the newest N."""
        return self.journal.calls(model=model, path=path, limit=limit)

    @property
    def served(self) -> int:
        """Calls answered (or cut off) since this gateway was made, whatever the journal kept: every
        call it journals or would have (before a reset), including refused heads; not ``/_gateway/*``."""
        return self.journal.served

    @property
    def dropped(self) -> int:
        """Oldest calls the journal let go to stay within its bounds (since the last reset)."""
        return self.journal.dropped

    def reset(self) -> None:
        """Forget calls and per-model attempt counts; a replaying gateway rewinds to each request's first recording."""
        self.journal.reset()
        if self.app.replayer is not None:
            self.app.replayer.reset()

    def advance(self) -> None:
        """End the current ``tpm-<n>`` window (as ``POST /_gateway/advance``): spent tokens start again at 0."""
        self.app.windows.advance()

    def set_answers(self, answers: AnswerKey | Mapping[str, str | Mapping[str, Any]] | Path | None) -> None:
        """Replace the answer key (``None`` goes back to prompt-derived answers)."""
        self.app.answers = _answer_key(answers)


def _answer_key(answers: AnswerKey | Mapping[str, str | Mapping[str, Any]] | Path | None) -> AnswerKey:
    if isinstance(answers, AnswerKey):
        return answers
    if isinstance(answers, Path):
        return load_answer_key(answers)
    return AnswerKey(answers)
