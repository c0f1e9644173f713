"""Gateway throughput and latency: non-streaming chat completions over keep-alive connections.

The server runs in its own process pinned to one core; this process drives it from the
other core with a lean asyncio (uvloop) HTTP/1.1 client. A second phase measures the same
load while another client (its own process) abuses the gateway: the largest requests the
limits allow, refused oversized ones, 3 MiB bad bodies, and stalled requests, half-sent bodies
and half-sent heads held open; it prints the p99 of the normal requests against the quiet p99
(a figure: the issue-30 rewrite dropped the fairness target with the scheduler). Prints figures
and their ratio to the targets; asserts nothing about time.

    python packages/gateway-stub/benchmarks/bench_gateway.py [--seconds 10] [--connections 32]
        [--request chat|structured|loglikelihood] [--no-abuse] [--replay]

``--request structured`` sends a Responses request with a JSON-schema ``text.format``;
``--request loglikelihood`` sends lm_eval's scoring request for a 4-choice question (four
GPT-2 token-id prompts, echo, ``max_tokens: 1``, ``logprobs: 1``) to a gateway with an answer key.

Every run (but ``--replay``) first measures plain chat throughput against a bare ASGI app on uvicorn
(httptools, uvloop) that reads the body and returns a fixed chat completion, started in the same run
on the same core, the two measured in alternating rounds (medians, and the ratio of each round): gateway
req/s, bare req/s and their ratio (floor 0.5, issue 30). With ``wrk``
installed the two are driven by ``wrk`` (one thread, ``--connections``); otherwise by the client below.

``--replay`` records the chat request through a recording gateway (``--record``, its upstream a
synthetic gateway), then measures the synthetic gateway and a gateway replaying that cassette
under the same load, one after the other, and prints both and their ratio (target >= 0.8).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

TARGET_RPS = 8_000
TARGET_P99_MS = 15.0
TARGET_REPLAY_RATIO = 0.8
#: Issue 30: plain chat throughput at least half a bare ASGI app's on the same uvicorn.
FLOOR_BARE_RATIO = 0.5
#: Turns each server gets in the comparison, alternating (see ``_bare_comparison``).
BARE_ROUNDS = 3
BODY = json.dumps({"model": "gpt-stub", "messages": [{"role": "user", "content": "What is the capital of France?"}]})
_CITY = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "population": {"type": "integer"},
        "capital": {"type": "boolean"},
        "districts": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "population", "capital", "districts"],
    "additionalProperties": False,
}
#: "Question: What is the capital of France?\nAnswer:" in GPT-2 ids, then each choice's ids.
_CONTEXT = [24361, 25, 1867, 318, 262, 3139, 286, 4881, 30, 198, 33706, 25]
_CHOICES = ([6342], [35193], [45996, 8270], [18460])  # " Paris", " Lyon", " Marseille", " Nice"
REQUESTS = {
    "chat": ("/v1/chat/completions", BODY),
    "structured": (
        "/v1/responses",
        json.dumps(
            {
                "model": "gpt-stub",
                "input": "Describe Paris.",
                "text": {"format": {"type": "json_schema", "name": "city", "schema": _CITY, "strict": True}},
            }
        ),
    ),
    "loglikelihood": (
        "/v1/completions",
        json.dumps(
            {
                "model": "gpt-stub",
                "prompt": [_CONTEXT + choice for choice in _CHOICES],
                "temperature": 0,
                "max_tokens": 1,
                "logprobs": 1,
                "seed": 1234,
                "echo": True,
            }
        ),
    ),
}
ANSWERS = {"What is the capital of France?": "Paris"}
#: What the bare app answers every request: a chat completion of the gateway's shape.
BARE_REPLY = json.dumps(
    {
        "id": "chatcmpl-0123456789abcdef01234567",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "gpt-stub",
        "system_fingerprint": "fp_evaljig",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Paris", "refusal": None, "annotations": []},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8},
        "service_tier": "default",
    }
).encode()


async def _bare_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The floor's reference: read the body, answer a fixed chat completion (no parsing, no journal)."""
    if scope["type"] != "http":
        return
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(BARE_REPLY)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": BARE_REPLY})


def _bare_main() -> int:
    """Serve ``_bare_app`` on uvicorn (httptools, uvloop) as the gateway's CLI runs, printing its ready line."""
    import uvicorn

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    config = uvicorn.Config(
        _bare_app, loop="uvloop", http="httptools", lifespan="off", access_log=False, log_level="warning",
        proxy_headers=False, server_header=False, date_header=False,
    )  # fmt: skip
    print(f"ready http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)
    uvicorn.Server(config).run(sockets=[sock])
    return 0


def _wrk_rps(port: int, seconds: float, connections: int) -> float:
    """Plain chat req/s by ``wrk`` (one thread) against ``port``."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(f'wrk.method = "POST"\nwrk.body = {json.dumps(BODY)}\n')
        script.write('wrk.headers["Content-Type"] = "application/json"\n')
    try:
        out = subprocess.run(
            ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "-s", script.name,
             f"http://127.0.0.1:{port}/v1/chat/completions"],
            capture_output=True, text=True, timeout=seconds + 60, check=True,
        ).stdout  # fmt: skip
    finally:
        Path(script.name).unlink()
    found = re.search(r"Requests/sec:\s+([0-9.]+)", out)
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if non_2xx:
        print(f"  wrk: {non_2xx.group(1)} non-2xx answers")
    return float(found.group(1)) if found else 0.0


def _rps(port: int, args: argparse.Namespace, pid: int) -> tuple[float, float, float | None]:
    """Plain chat against ``port`` after a warm-up (``wrk`` when installed, else the client below): req/s, the
    server's (``pid``) CPU per request in microseconds, and the share of its core the Python client used
    (None with ``wrk``). CPU per request does not depend on whether the client kept the server busy."""
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:  # pragma: no cover
        runner = asyncio.run
    if shutil.which("wrk"):
        _wrk_rps(port, args.warmup, args.connections)
        server_before, started = _cpu_seconds(pid), time.perf_counter()
        rps = _wrk_rps(port, args.seconds, args.connections)
        requests = rps * (time.perf_counter() - started)
        return rps, (_cpu_seconds(pid) - server_before) / max(requests, 1) * 1e6, None
    runner(_load(port, args.warmup, args.connections))
    cpu_before, server_before = time.process_time(), _cpu_seconds(pid)
    latencies, _, elapsed = runner(_load(port, args.seconds, args.connections))
    server_us = (_cpu_seconds(pid) - server_before) / max(len(latencies), 1) * 1e6
    return len(latencies) / elapsed, server_us, (time.process_time() - cpu_before) / elapsed


def _bare_comparison(args: argparse.Namespace) -> None:
    """Gateway and bare-app plain chat throughput in the same run, and their ratio against the floor.

    Both servers run at once (pinned to core 0, only the one under load busy) and are measured in turn,
    ``BARE_ROUNDS`` times each, ``args.seconds / BARE_ROUNDS`` a turn: a virtual machine's speed drifts by
    tens of percent within a minute, and alternating puts the same drift on both sides of each ratio.
    Each ratio is the median of the rounds' ratios (the rounds' ratios show the spread); req/s and CPU per
    request are the medians of the rounds.
    """
    gateway, port = _start()
    bare = subprocess.Popen(
        [sys.executable, __file__, "--bare-server"], stdout=subprocess.PIPE, text=True, preexec_fn=lambda: _pin(0)
    )
    turn = argparse.Namespace(**{**vars(args), "seconds": max(1.0, args.seconds / BARE_ROUNDS)})
    rounds: list[tuple[tuple[float, float, float | None], tuple[float, float, float | None]]] = []
    try:
        assert bare.stdout is not None
        bare_port = int(bare.stdout.readline().split()[1].rsplit(":", 1)[1].split("/")[0])
        _pin(1)
        for _ in range(BARE_ROUNDS):
            rounds.append((_rps(port, turn, gateway.pid), _rps(bare_port, turn, bare.pid)))
            turn.warmup = 0.2  # warm already: a short settle between turns
    finally:
        for server in (gateway, bare):
            server.terminate()
            server.wait(timeout=10)
    gateway_rps, gateway_us = statistics.median(g[0] for g, _ in rounds), statistics.median(g[1] for g, _ in rounds)
    bare_rps, bare_us = statistics.median(b[0] for _, b in rounds), statistics.median(b[1] for _, b in rounds)
    tool = "wrk -t1" if shutil.which("wrk") else "the Python client"
    # the ratio of each round (both sides under the same drift), then their median
    ratio = statistics.median(g[0] / b[0] if b[0] else 0.0 for g, b in rounds)
    print(f"plain chat vs a bare ASGI app on uvicorn (httptools, uvloop), {tool}, {args.connections} connections, "
          f"{BARE_ROUNDS} alternating rounds of {turn.seconds:.1f} s each, servers pinned to core 0, "
          f"load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(f"  gateway {gateway_rps:,.0f} req/s, bare {bare_rps:,.0f} req/s (medians): ratio {ratio:.2f} (median) "
          f"(floor {FLOOR_BARE_RATIO}: {'met' if ratio >= FLOOR_BARE_RATIO else 'NOT met'}); by round "
          + ", ".join(f"{g[0] / b[0]:.2f}" if b[0] else "-" for g, b in rounds))  # fmt: skip
    cpu_ratio = statistics.median(b[1] / g[1] if g[1] else 0.0 for g, b in rounds)
    print(f"  server CPU per request: gateway {gateway_us:.0f} us, bare {bare_us:.0f} us: ratio {cpu_ratio:.2f} "
          "(the same floor, whatever the client could drive); by round "
          + ", ".join(f"{b[1] / g[1]:.2f}" if g[1] else "-" for g, b in rounds))  # fmt: skip
    gateway_clients = [g[2] for g, _ in rounds if g[2] is not None]
    bare_clients = [b[2] for _, b in rounds if b[2] is not None]
    if gateway_clients and bare_clients:  # the Python client (wrk reports no CPU share)
        gateway_client, bare_client = statistics.median(gateway_clients), statistics.median(bare_clients)
        print(f"  the Python client used {gateway_client:.0%} and {bare_client:.0%} of its core "
              "(near 100%: the client, not the server, set that req/s)")  # fmt: skip


def _pin(cpu: int) -> None:
    if hasattr(os, "sched_setaffinity") and os.cpu_count() and os.cpu_count() > 1:  # type: ignore[operator]
        os.sched_setaffinity(0, {cpu})


class _Conn(asyncio.Protocol):
    """One keep-alive connection sending the next request as soon as a response is complete."""

    def __init__(self, request: bytes, latencies: list[int], stop_at: float) -> None:
        self.request, self.latencies, self.stop_at = request, latencies, stop_at
        self.buffer = b""
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.errors = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self._send()

    def _send(self) -> None:
        self.started = time.perf_counter_ns()
        self.transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buffer[:head_end]
            at = head.lower().find(b"content-length:")
            length = int(head[at + 15 : head.find(b"\r\n", at) if head.find(b"\r\n", at) > 0 else None])
            end = head_end + 4 + length
            if len(self.buffer) < end:
                return
            if not head.startswith(b"HTTP/1.1 200"):
                self.errors += 1
            self.buffer = self.buffer[end:]
            self.latencies.append(time.perf_counter_ns() - self.started)
            if time.perf_counter() >= self.stop_at:
                self.transport.close()  # type: ignore[attr-defined]
                if not self.done.done():
                    self.done.set_result(None)
                return
            self._send()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def _load(port: int, seconds: float, connections: int, kind: str = "chat") -> tuple[list[int], int, float]:
    loop = asyncio.get_running_loop()
    path, body = REQUESTS[kind]
    request = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n{body}"
    ).encode()
    latencies: list[int] = []
    begin = time.perf_counter()
    stop_at = begin + seconds
    conns = [
        (await loop.create_connection(lambda: _Conn(request, latencies, stop_at), "127.0.0.1", port))[1]
        for _ in range(connections)
    ]
    await asyncio.gather(*(c.done for c in conns))
    return latencies, sum(c.errors for c in conns), time.perf_counter() - begin


def _abusive_requests(port: int) -> dict[str, bytes]:
    """Each is sent over and over on its own connection by the abusing client."""

    def post(path: str, body: bytes) -> bytes:
        head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {len(body)}\r\n\r\n"
        return head.encode() + body

    def chat(**extra: object) -> bytes:
        return json.dumps({**json.loads(BODY), **extra}).encode()

    embed = {"model": "embed", "dimensions": 8192, "encoding_format": "base64"}
    heavy_chat = chat(n=128, max_tokens=8192, logprobs=True, top_logprobs=20)
    prompts = json.dumps({"model": "m", "prompt": ["p q"] * 4096}).encode()
    allowed, refused = (json.dumps({**embed, "input": ["x"] * k}).encode() for k in (128, 4000))
    echo = {"model": "m", "echo": True, "logprobs": 5, "max_tokens": 1}
    echo_allowed = json.dumps({**echo, "prompt": "w " * 26_000, "n": 2}).encode()  # 260,000 of 262,144
    echo_refused = json.dumps({**echo, "prompt": "word " * 17_600, "n": 128}).encode()  # issue 23: 88 KiB
    return {
        "embeddings at the limit (128 x 8192)": post("/v1/embeddings", allowed),
        "embeddings over the limit (4000 x 8192)": post("/v1/embeddings", refused),
        "chat n=128, logprobs top 20": post("/v1/chat/completions", heavy_chat),
        "completions 4096 prompts": post("/v1/completions", prompts),
        "completions echo + logprobs 5 at the limit": post("/v1/completions", echo_allowed),
        "completions echo + logprobs 5 over the limit": post("/v1/completions", echo_refused),
        "3 MiB bad JSON body": post("/v1/chat/completions", b"{" + b"x" * (3 * 1024 * 1024)),
    }


async def _repeat(port: int, request: bytes, stop_at: float) -> list[int]:
    """Send ``request`` back to back on one connection; the statuses answered."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    statuses: list[int] = []
    while time.perf_counter() < stop_at:
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        at = head.lower().find(b"content-length:")
        length = int(head[at + 15 : head.find(b"\r\n", at)])
        await reader.readexactly(length)
        statuses.append(int(head[9:12]))
    writer.close()
    return statuses


async def _hold(port: int, request: bytes, stop_at: float) -> None:
    """Send ``request`` and keep the connection open without reading until ``stop_at``."""
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await asyncio.sleep(max(0.0, stop_at - time.perf_counter()))
    writer.close()


async def _abuse(port: int, seconds: float, stalled: int) -> dict[str, object]:
    stop_at = time.perf_counter() + seconds
    stall = json.dumps({**json.loads(BODY), "model": "stall"})
    held = [f"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: {len(stall)}\r\n\r\n{stall}".encode()] * stalled
    held += [b'POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 1000\r\n\r\n{"model": '] * stalled
    held += [b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le"] * stalled  # half-sent heads
    requests = _abusive_requests(port)
    results = await asyncio.gather(
        *(_repeat(port, r, stop_at) for r in requests.values()), *(_hold(port, r, stop_at) for r in held)
    )
    answered = {name: dict(Counter(statuses)) for name, statuses in zip(requests, results, strict=False)}
    return {"answered": answered, "held": len(held)}


def _abuser_main(port: int, seconds: float, stalled: int) -> int:
    """The abusing client, run as its own process so its work is not billed to the measuring client."""
    print(json.dumps(asyncio.run(_abuse(port, seconds, stalled))), flush=True)
    return 0


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a process (Linux ``/proc``; 0 elsewhere): how much core the server got."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()  # noqa: PTH123, SIM115
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _p99_ms(latencies: list[int]) -> float:
    return statistics.quantiles(latencies, n=1000)[989] / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--stalled", type=int, default=16, help="stalled requests, half-sent bodies and heads (each)")
    parser.add_argument("--request", choices=sorted(REQUESTS), default="chat", help="what each request asks")
    parser.add_argument("--no-abuse", action="store_true", help="skip the phase under abuse")
    parser.add_argument("--replay", action="store_true", help="compare a replaying gateway with the synthetic one")
    parser.add_argument("--no-bare", action="store_true", help="skip the comparison with a bare ASGI app")
    parser.add_argument("--abuser", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--bare-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_server:
        return _bare_main()
    if args.abuser:
        return _abuser_main(args.abuser, args.seconds, args.stalled)
    if args.replay:
        return _replay_main(args)
    if not args.no_bare:
        _bare_comparison(args)

    answers = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)  # noqa: SIM115 - removed below
    with answers:
        json.dump(ANSWERS, answers)
    server = subprocess.Popen(
        [sys.executable, "-m", "evaljig_gateway", "serve", "--port", "0", "--journal-capacity", "10000"]
        + (["--answers", answers.name] if args.request == "loglikelihood" else []),
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: _pin(0),
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline().split()
        if not line or line[0] != "ready":
            print(f"gateway did not start: {line}", file=sys.stderr)
            return 1
        port = int(line[1].rsplit(":", 1)[1].split("/")[0])
        _pin(1)
        try:
            import uvloop

            runner = uvloop.run
        except ImportError:  # pragma: no cover
            runner = asyncio.run
        print(
            f"gateway bench ({args.request}): {args.connections} keep-alive connections, {args.seconds:.0f} s, "
            "server pinned to 1 core"
        )
        runner(_load(port, args.warmup, args.connections, args.request))
        cpu_before, server_before = time.process_time(), _cpu_seconds(server.pid)
        latencies, errors, elapsed = runner(_load(port, args.seconds, args.connections, args.request))
        client_cpu = (time.process_time() - cpu_before) / elapsed
        server_cpu = (_cpu_seconds(server.pid) - server_before) / elapsed
        if args.no_abuse:
            _report(latencies, errors, elapsed, client_cpu, server_cpu)
            return 0
        abuser = subprocess.Popen(
            [sys.executable, __file__, "--abuser", str(port), "--seconds", str(args.seconds + 1),
             "--stalled", str(args.stalled)],
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: _pin(1),  # beside the load generator, off the server's core
        )  # fmt: skip
        time.sleep(0.5)  # let the abuse start before measuring
        cpu_before, server_before = time.process_time(), _cpu_seconds(server.pid)
        abused, abused_errors, abused_elapsed = runner(_load(port, args.seconds, args.connections))
        abused_cpu = (time.process_time() - cpu_before) / abused_elapsed
        abused_server_cpu = (_cpu_seconds(server.pid) - server_before) / abused_elapsed
        abuse_report = json.loads(abuser.communicate(timeout=120)[0])
    finally:
        server.terminate()
        server.wait(timeout=10)
        Path(answers.name).unlink()

    _report(latencies, errors, elapsed, client_cpu, server_cpu)
    quiet, loud = _p99_ms(latencies), _p99_ms(abused)
    print(f"under abuse: the same load while another client sends heavy and stalled requests ({args.seconds:.0f} s)")
    print(f"  requests      {len(abused):>10,}   errors {abused_errors}   ({len(abused) / abused_elapsed:,.0f} req/s)")
    print(f"  latency p99   {loud:>10.2f} ms   quiet p99 {quiet:.2f} ms")
    print(f"  p99 ratio     {loud / quiet:>10.2f}x     (a figure, no target: heavy requests run in worker threads)")
    for name, statuses in abuse_report["answered"].items():
        print(f"  abuser: {name:<42} answered {statuses}")
    print(f"  abuser: {abuse_report['held']} stalled / half-sent requests held open throughout")
    print(f"  load generator used {abused_cpu:.0%} of its core (the abuser shares it)")
    print(f"  server got {abused_server_cpu:.0%} of its core")
    print("  on a shared machine the ratio moves with other load: run it more than once")
    return 0


def _start(*serve_args: str) -> tuple[subprocess.Popen[str], int]:
    """``evaljig-gateway serve`` pinned to core 0; the process and its port."""
    server = subprocess.Popen(
        [sys.executable, "-m", "evaljig_gateway", "serve", "--port", "0", "--journal-capacity", "10000", *serve_args],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: _pin(0),
    )
    assert server.stdout is not None
    line = server.stdout.readline().split()
    if not line or line[0] != "ready":
        server.kill()
        raise SystemExit(f"gateway did not start: {line}")
    return server, int(line[1].rsplit(":", 1)[1].split("/")[0])


def _measure(port: int, args: argparse.Namespace, pid: int) -> float:
    """Warm up, then drive ``port`` for ``args.seconds``; prints the figures and returns req/s."""
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:  # pragma: no cover
        runner = asyncio.run
    runner(_load(port, args.warmup, args.connections))
    cpu_before, server_before = time.process_time(), _cpu_seconds(pid)
    latencies, errors, elapsed = runner(_load(port, args.seconds, args.connections))
    client_cpu = (time.process_time() - cpu_before) / elapsed
    _report(latencies, errors, elapsed, client_cpu, (_cpu_seconds(pid) - server_before) / elapsed)
    return len(latencies) / elapsed


def _replay_main(args: argparse.Namespace) -> int:
    """Record the chat request from a synthetic gateway, then measure synthetic and replay serving alike."""
    import urllib.request

    with tempfile.TemporaryDirectory() as tmp:
        cassette = Path(tmp) / "bench.yaml"
        synthetic, port = _start()
        try:
            recorder, recorder_port = _start("--record", str(cassette), "--upstream", f"http://127.0.0.1:{port}/v1")
            request = urllib.request.Request(
                f"http://127.0.0.1:{recorder_port}/v1/chat/completions",
                data=BODY.encode(),
                headers={"content-type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=30) as answer:
                recorded = answer.read()
            recorder.terminate()
            out, _ = recorder.communicate(timeout=30)
            print(f"recording gateway: {out.strip().splitlines()[-1]}")
            _pin(1)
            print(f"synthetic gateway (chat): {args.connections} keep-alive connections, {args.seconds:.0f} s")
            synthetic_rps = _measure(port, args, synthetic.pid)
        finally:
            synthetic.terminate()
            synthetic.wait(timeout=10)
        replaying, replay_port = _start("--replay", str(cassette))
        try:
            print(f"replaying gateway (chat, from {cassette.name}): same load")
            replay_rps = _measure(replay_port, args, replaying.pid)
            with urllib.request.urlopen(
                urllib.request.Request(
                    f"http://127.0.0.1:{replay_port}/v1/chat/completions",
                    data=BODY.encode(),
                    headers={"content-type": "application/json"},
                ),
                timeout=30,
            ) as answer:
                same = json.loads(answer.read()) == json.loads(recorded)
        finally:
            replaying.terminate()
            replaying.wait(timeout=10)
    ratio = replay_rps / synthetic_rps
    print(f"replay {replay_rps:,.0f} req/s, synthetic {synthetic_rps:,.0f} req/s: ratio {ratio:.2f} "
          f"(target >= {TARGET_REPLAY_RATIO}); replayed answer equals the recorded one: {same}")  # fmt: skip
    print("on a shared machine the figures move with other load: run it more than once")
    return 0


def _report(latencies: list[int], errors: int, elapsed: float, client_cpu: float, server_cpu: float) -> None:
    """The quiet phase's figures."""
    latencies.sort()
    rps = len(latencies) / elapsed
    q = statistics.quantiles(latencies, n=1000)
    p50, p99, p999 = q[499] / 1e6, q[989] / 1e6, q[998] / 1e6
    print(f"  requests      {len(latencies):>10,}   errors {errors}")
    print(f"  throughput    {rps:>10,.0f} req/s   (target >= {TARGET_RPS:,}: {rps / TARGET_RPS:.2f}x)")
    print(f"  latency p50   {p50:>10.2f} ms")
    print(f"  latency p99   {p99:>10.2f} ms   (target <= {TARGET_P99_MS} ms: {TARGET_P99_MS / p99:.2f}x headroom)")
    print(f"  latency p99.9 {p999:>10.2f} ms")
    print(f"  load generator used {client_cpu:.0%} of its core (near 100% means the client limits the figure)")
    print(f"  server got {server_cpu:.0%} of its core (well under 100%: other processes share it)")


if __name__ == "__main__":
    sys.exit(main())
