"""Gateway throughput and latency: non-streaming chat completions over keep-alive connections.

The server runs in its own process pinned to one core; this process drives it from the
other core with a lean asyncio (uvloop) HTTP/1.1 client. Prints figures and their ratio
to the targets; asserts nothing about time.

    python packages/gateway-stub/benchmarks/bench_gateway.py [--seconds 10] [--connections 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time

TARGET_RPS = 8_000
TARGET_P99_MS = 15.0
BODY = json.dumps({"model": "gpt-stub", "messages": [{"role": "user", "content": "What is the capital of France?"}]})


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


async def _load(port: int, seconds: float, connections: int) -> tuple[list[int], int, float]:
    loop = asyncio.get_running_loop()
    request = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(BODY)}\r\n\r\n{BODY}"
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--warmup", type=float, default=1.0)
    args = parser.parse_args()

    server = subprocess.Popen(
        [sys.executable, "-m", "evaljig_gateway.cli", "serve", "--port", "0", "--journal-capacity", "10000"],
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
            f"gateway bench: {args.connections} keep-alive connections, {args.seconds:.0f} s, server pinned to 1 core"
        )
        runner(_load(port, args.warmup, args.connections))
        cpu_before = time.process_time()
        latencies, errors, elapsed = runner(_load(port, args.seconds, args.connections))
        client_cpu = (time.process_time() - cpu_before) / elapsed
    finally:
        server.terminate()
        server.wait(timeout=10)

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
    return 0


if __name__ == "__main__":
    sys.exit(main())
