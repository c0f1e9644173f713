"""What a hostile request costs the other clients: issue 30's held-out probes against a live gateway.

For each hostile request a fresh ``evaljig-gateway serve`` is started; a plain chat client sends
requests one after the other while the hostile request is in flight (and for a moment after), and
the latencies that client sees are printed (p50/p99/max), with the hostile request's own status and
time. Then the server gets SIGTERM and the time until it is gone is printed (``KILLED`` when it was
still running after ``--term-wait`` seconds and had to be killed). Prints figures; asserts nothing.

    python packages/gateway-stub/benchmarks/bench_abuse.py [--timeout 15] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

import httpx

TARGET_MS = 100.0
PLAIN = {"model": "gpt-stub", "messages": [{"role": "user", "content": "What is the capital of France?"}]}


def _schema_request(schema: Any) -> tuple[str, dict[str, Any]]:
    return "/chat/completions", {
        "model": "gpt-stub",
        "messages": [{"role": "user", "content": "answer"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}},
    }


def _tools_request() -> tuple[str, dict[str, Any]]:
    tools = [
        {"type": "function", "function": {"name": f"lookup_{'x' * 40}_{i}", "parameters": {"type": "object"}}}
        for i in range(128)
    ]
    message = ("lookup " + "x " * 40) * (1024 * 1024 // 90)
    return "/chat/completions", {
        "model": "gpt-stub",
        "messages": [{"role": "user", "content": message}],
        "tools": tools,
        "tool_choice": "required",
    }


HOSTILE: dict[str, tuple[str, dict[str, Any]]] = {
    "lookahead-redos": _schema_request({"type": "string", "pattern": "^(?!(x+x+)+y)(x+x+)+$", "minLength": 60}),
    "nested-repeat": _schema_request({"type": "string", "pattern": "(a{3000}){3000}"}),
    "minLength-2e7": _schema_request({"type": "string", "minLength": 20_000_000}),
    "minProperties-1e9": _schema_request({"type": "object", "minProperties": 1_000_000_000}),
    "400x100k-strings": _schema_request(
        {"type": "array", "minItems": 400, "items": {"type": "string", "minLength": 100_000}}
    ),
    "128-tools-1MB": _tools_request(),
    "allOf-const-conflict": _schema_request({"allOf": [{"const": 1}, {"const": 2}]}),
    "multipleOf-1e-300": _schema_request({"type": "number", "multipleOf": 1e-300, "minimum": 1, "maximum": 1e10}),
    # a prompt of one token per character: over --max-prompt-chars it is refused before tokenising;
    # just under it, it is tokenised (about 2 s) in a worker thread while the plain client is served
    "a1-prompt-3.8MB": (
        "/chat/completions",
        {"model": "gpt-stub", "messages": [{"role": "user", "content": "a1" * 1_900_000}]},
    ),
    "a1-prompt-1M-chars": (
        "/chat/completions",
        {"model": "gpt-stub", "messages": [{"role": "user", "content": "a1" * 524_000}]},
    ),
    "embeddings-at-limit": ("/embeddings", {"model": "e", "input": ["x"] * 128, "dimensions": 8192}),
    "echo-logprobs-at-limit": (
        "/completions",
        {"model": "m", "echo": True, "logprobs": 5, "max_tokens": 1, "prompt": "w " * 3_200, "n": 2},
    ),
    "responses-type-list": (
        "/responses",
        {"model": "gpt-stub", "input": [{"type": ["message"], "role": "user", "content": "hi"}]},
    ),
}


def _start() -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [sys.executable, "-m", "evaljig_gateway", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline().split()
    if not line or line[0] != "ready":
        server.kill()
        raise SystemExit(f"the gateway did not start: {line}")
    return server, line[1]


def _plain_client(url: str, stop: threading.Event, latencies: list[float]) -> None:
    with httpx.Client(base_url=url, timeout=60) as client:
        while not stop.is_set():
            started = time.perf_counter()
            with contextlib.suppress(httpx.HTTPError):
                client.post("/chat/completions", json=PLAIN)
            latencies.append((time.perf_counter() - started) * 1000)


def _probe(name: str, timeout: float, term_wait: float) -> dict[str, Any]:
    path, body = HOSTILE[name]
    raw = json.dumps(body).encode()
    server, url = _start()
    try:
        with httpx.Client(base_url=url, timeout=5) as warm:
            for _ in range(20):
                warm.post("/chat/completions", json=PLAIN)
        latencies: list[float] = []
        stop = threading.Event()
        plain = threading.Thread(target=_plain_client, args=(url, stop, latencies), daemon=True)
        plain.start()
        time.sleep(0.2)
        started = time.perf_counter()
        try:
            with httpx.Client(base_url=url, timeout=timeout) as client:
                reply = client.post(path, content=raw, headers={"content-type": "application/json"})
            status, size = str(reply.status_code), len(reply.content)
        except httpx.TimeoutException:
            status, size = "timeout", 0
        own_ms = (time.perf_counter() - started) * 1000
        time.sleep(0.2)
        stop.set()
        plain.join(timeout)
    finally:
        term_started = time.perf_counter()
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(term_wait)
            term = f"{time.perf_counter() - term_started:.2f} s"
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
            term = "KILLED"
    ordered = sorted(latencies) or [0.0]
    return {
        "name": name,
        "status": status,
        "bytes": size,
        "own_ms": own_ms,
        "p50": statistics.median(ordered),
        "p99": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
        "max": ordered[-1],
        "count": len(latencies),
        "sigterm": term,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=15.0, help="seconds the hostile request may take")
    parser.add_argument("--term-wait", type=float, default=5.0, help="seconds to wait after SIGTERM before SIGKILL")
    parser.add_argument("--only", nargs="*", choices=sorted(HOSTILE), help="run these probes only")
    args = parser.parse_args()
    print(
        f"{'probe':22} {'status':>7} {'bytes':>9} {'own ms':>9} | plain client ms: {'p50':>6} {'p99':>8} "
        f"{'max':>8} {'n':>5} | SIGTERM"
    )
    worst = 0.0
    for name in args.only or HOSTILE:
        r = _probe(name, args.timeout, args.term_wait)
        worst = max(worst, r["max"])
        print(
            f"{r['name']:22} {r['status']:>7} {r['bytes']:>9} {r['own_ms']:9.1f} | {'':16} {r['p50']:6.1f} "
            f"{r['p99']:8.1f} {r['max']:8.1f} {r['count']:5} | {r['sigterm']}",
            flush=True,
        )
    print(f"worst latency a plain client saw: {worst:.1f} ms (target: under {TARGET_MS:.0f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
