"""Cassette costs: loading and writing big cassettes, and one replay miss against many recordings.

Prints figures and their targets; asserts nothing about time.

    python packages/gateway-stub/benchmarks/bench_cassette.py [--sizes 10,100] [--recordings 10000]

* **load**: ``load_cassette`` alone, then what ``serve --replay`` does at start (load and file every
  exchange in the replayer, miss index included), for cassettes of 10 MB and 100 MB made of
  4 KB exchanges (a 2 KB prompt, a 2 KB answer). Target: 100 MB in <= 10 s and <= 3x its size.
* **write**: what a recording gateway does at stop (``write_items``: the join, the name and secret
  scans, one atomic write) with every exchange serialised already, as the recorder does while it
  records; and, for scale, what serialising them costs (spread over the recording, in a worker
  thread). Target: 100 MB within a 10 s ``docker stop``.
* **miss**: the 404 for a request that differs from one of 10,000 recorded 4 KB requests in one
  field (``temperature``), computed whole (the server runs it a slice at a time). Target <= 50 ms.

Each measurement runs in a fresh process: its peak memory is that process's peak resident size
less its size before the measurement.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from evaljig_gateway._cassette import Exchange, item_text, join_items, load_cassette, pretty_json, write_items
from evaljig_gateway._cassette import match_key as _match_key
from evaljig_gateway._replay import Replayer

EXCHANGE_BYTES = 4096
TARGET_LOAD_S, TARGET_MEMORY_RATIO, TARGET_WRITE_S, TARGET_MISS_MS = 10.0, 3.0, 10.0, 50.0
_WORDS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta")


def exchange(i: int, temperature: float = 0) -> Exchange:
    """A 4 KB exchange: a 2 KB prompt naming ``i``, a 2 KB answer."""
    words = " ".join(_WORDS[(i + k) % len(_WORDS)] for k in range(300))[:1900]
    request = {"model": "gpt-x", "messages": [{"role": "user", "content": f"q{i:07d} {words}"}]}
    request["temperature"] = temperature
    choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": words}}
    answer = {"id": f"c{i:07d}", "object": "chat.completion", "created": 1, "model": "gpt-x", "choices": [choice]}
    headers = (("content-type", "application/json"),)
    return Exchange("POST", "/v1/chat/completions", pretty_json(request), 200, headers, pretty_json(answer), "OK")


def item_texts(count: int) -> list[bytes]:
    """``count`` distinct items' texts: one serialised by PyYAML, the rest by changing its number (same text
    as serialising each: only the digits differ), so making a 100 MB cassette takes a second, not minutes."""
    template = item_text(exchange(0))
    return [template.replace(b"q0000000", f"q{i:07d}".encode()).replace(b"c0000000", f"c{i:07d}".encode())
            for i in range(count)]  # fmt: skip


def make_cassette(path: Path, megabytes: int) -> int:
    texts = item_texts(megabytes * 1_000_000 // len(item_text(exchange(0))))
    path.write_bytes(join_items(texts))
    return len(texts)


# --- children: one measurement each -------------------------------------------------------------------------------


def _status_mib(field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak) from /proc; ``ru_maxrss`` elsewhere (it keeps the forking parent's
    peak across exec on Linux, hence /proc first)."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(mode: str, path: Path) -> dict[str, Any]:
    if mode == "write":
        exchanges = load_cassette(path, max_bytes=1 << 40)
        items = [(e, t) for e, t in zip(exchanges, _texts_of(path), strict=True)]
        del exchanges
    before = _status_mib("VmRSS")
    started = time.perf_counter()
    if mode == "load":
        result = len(load_cassette(path, max_bytes=1 << 40))
    elif mode == "replay":
        result = len(Replayer(load_cassette(path, max_bytes=1 << 40)))
    else:
        out = path.with_name("written.yaml")
        result = write_items(out, items, max_bytes=1 << 40)
        out.unlink()
    seconds = time.perf_counter() - started
    peak = _status_mib("VmHWM")
    return {"seconds": seconds, "peak_mib": peak - before, "result": result}


def _texts_of(path: Path) -> list[bytes]:
    from evaljig_gateway._cassette import read_items

    return [t for _, t in read_items(path, max_bytes=1 << 40)]


def _measure(mode: str, path: Path) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__, "--child", mode, str(path)], capture_output=True, text=True,
                          check=True)  # fmt: skip
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def bench_sizes(sizes: list[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for megabytes in sizes:
            path = Path(tmp) / f"c{megabytes}.yaml"
            count = make_cassette(path, megabytes)
            size_mib = path.stat().st_size / 2**20
            print(f"\n{path.stat().st_size / 1e6:.1f} MB cassette, {count:,} exchanges of ~4 KB")
            for mode, label in (("load", "load_cassette"), ("replay", "load + replayer (serve --replay)"),
                                ("write", "write at stop (write_items)")):  # fmt: skip
                figures = _measure(mode, path)
                target = TARGET_WRITE_S if mode == "write" else TARGET_LOAD_S
                ratio = figures["peak_mib"] / size_mib
                print(f"  {label:34s} {figures['seconds']:7.2f} s ({figures['seconds'] * 100 / megabytes:5.2f} s "
                      f"per 100 MB; target {target:g} s)   peak +{figures['peak_mib']:7.1f} MiB = {ratio:4.2f}x "
                      f"the file (target <= {TARGET_MEMORY_RATIO:g}x)")  # fmt: skip
            sample = [exchange(i) for i in range(200)]
            started = time.perf_counter()
            written = sum(len(item_text(e)) for e in sample)
            rate = written / (time.perf_counter() - started) / 1e6
            print(f"  serialising while recording (PyYAML, worker thread): {rate:.2f} MB/s "
                  f"({megabytes / rate:.0f} s of worker time, spread over the recording)")  # fmt: skip


def bench_miss(recordings: int, repeats: int = 20) -> None:
    exchanges = [exchange(i) for i in range(recordings)]
    started = time.perf_counter()
    replayer = Replayer(exchanges)
    built = time.perf_counter() - started
    timings = []
    first = ""
    for k in range(repeats):
        request = json.loads(exchange((k * 7919) % recordings, temperature=0.3).request_body)
        key = _match_key("POST", "/v1/chat/completions", request)
        started = time.perf_counter()
        error = replayer.miss(key)
        timings.append((time.perf_counter() - started) * 1000)
        first = first or error.message.splitlines()[0]
    print(f"\nmiss against {recordings:,} recorded 4 KB requests (replayer built in {built:.2f} s):")
    print(f"  median {statistics.median(timings):.1f} ms, max {max(timings):.1f} ms over {repeats} misses "
          f"(target <= {TARGET_MISS_MS:g} ms; the server runs it in slices, handing the loop back)")  # fmt: skip
    print(f"  first line: {first[:160]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10,100", help="cassette sizes in MB, comma-separated")
    parser.add_argument("--recordings", type=int, default=10_000)
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child[0], Path(args.child[1]))))
        return
    bench_miss(args.recordings)
    bench_sizes([int(s) for s in args.sizes.split(",") if s])


if __name__ == "__main__":
    main()
