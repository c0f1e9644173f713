"""Benchmark: merge 100,000 synthetic case reports from 16 workers; per-case plugin overhead.

Prints figures and their ratio to the targets (merge <= 10 s and <= 300 MB peak RSS; writing
report.html alone <= 2x its time on the reference commit); it never asserts on time. The
merge runs in a child process so its peak RSS is its own (``ru_maxrss`` of children).
Usage: ``python bench_merge.py [--cases N] [--workers W]``.
"""

from __future__ import annotations

import argparse
import base64
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from evaljig_report import collect
from evaljig_report._collect import MetricStats
from evaljig_report._html import write_html
from evaljig_report._layout import Layout, case_dirname
from evaljig_report._recorder import Recorder

TARGET_SECONDS = 10.0
TARGET_MB = 300.0
#: report.html alone for 100,000 cases on the commit before the at-a-glance report (6ed876a),
#: best of 3 on the 2-core reference machine; the HTML may take at most twice that.
BASELINE_HTML_SECONDS = 3.04
HTML_TARGET_RATIO = 2.0
STATUSES = ("pass",) * 17 + ("fail", "fail", "skip")  # 85 % pass


def synthetic_doc(n: int, worker: str) -> dict[str, object]:
    """A realistic case.json: two metrics, a function call, an inference and one artifact record."""
    suite = f"packages/demo/tests/test_tool_{n % 40}.py::TestTool{n % 7}"
    status = STATUSES[n % len(STATUSES)]
    metrics = [
        {"name": "exact_match", "status": status, "score": 1.0 if status == "pass" else 0.0,
         "reason": "output matches" if status == "pass" else f"expected {n} got {n + 1}",
         "nodeid": f"{suite}::test_exact[case-{n}]", "duration_s": 0.0012, "error": None},
        {"name": "judge", "status": "pass", "score": 0.9, "reason": "looks right",
         "nodeid": f"{suite}::test_judge[case-{n}]", "duration_s": 0.0009, "error": None},
    ]  # fmt: skip
    return {
        "schema_version": 1,
        "kind": "eval",
        "source": {"run": "bench", "session": "tests", "worker": worker, "suite": suite, "case_id": f"case-{n}"},
        "status": "fail" if status == "fail" else "pass",
        "case": {
            "case_id": f"case-{n}",
            "description": f"synthetic case {n}",
            "tool_id": "code",
            "function_call": {"name": "run_code", "args": {"code": f"print({n} + 1)", "timeout": 5}},
            "expectations": {"output": str(n + 1)},
        },
        "inference": {"output": str(n + 1), "stdout": f"{n + 1}\n", "exit_code": 0},
        "metrics": metrics,
        "artifacts": [
            {"name": "result.csv", "mime_type": "text/csv", "status": "written", "file": "result.csv", "bytes": 12}
        ],
        "errors": [],
        "updated_at": "2025-01-01T00:00:00.000+00:00",
    }


def generate(root: Path, cases: int, workers: int) -> Path:
    run = root / "bench"
    for n in range(cases):
        worker = f"gw{n % workers}"
        doc = synthetic_doc(n, worker)
        source = doc["source"]
        assert isinstance(source, dict)
        case_dir = run / "tests" / worker / case_dirname(source["suite"], source["case_id"])
        case_dir.mkdir(parents=True)
        (case_dir / "case.json").write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    return run


def time_merge(run: Path) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "evaljig_report", "merge", str(run), "--no-step-summary"],
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak_kb == before:
        print("note: peak RSS may be an earlier child's (ru_maxrss is a maximum over children)")
    return seconds, peak_kb / 1024, proc.stdout.strip().splitlines()[0]


def time_html(run: Path, repeat: int = 3) -> tuple[float, float]:
    """Best-of-``repeat`` seconds to write report.html alone (rows already collected), and its size in MB."""
    result = collect([run], skip=[run / "merged"])
    result.out_dir = run / "merged-html"
    result.out_dir.mkdir()
    stats = MetricStats.of(result.rows)
    path = result.out_dir / "report.html"
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        write_html(path, result, stats, "2025-01-01T00:00:00+00:00")
        best = min(best, time.perf_counter() - start)
    return best, path.stat().st_size / 1e6


def plugin_overhead(root: Path, cases: int) -> dict[str, float]:
    """Microseconds per call of the recorder paths the pytest plugin runs for each test item."""
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 2000).decode()
    recorder = Recorder(Layout(root, "overhead", "tests", "gw0"))
    case = {"case_id": "x", "description": "d", "tool_id": "code", "function_call": {"name": "f", "args": {"a": 1}}}
    results: dict[str, float] = {}

    def record(n: int, metric: str, artifacts: bool) -> None:
        inference = {"output": "2", "artifacts": [{"name": "p.png", "mime_type": "image/png", "base64": png}]}
        recorder.add_record(
            {"suite": "tests/test_x.py::TestX", "case_id": f"{metric}-{artifacts}-{n}", "case": case,
             "inference": inference if artifacts else {"output": "2"},
             "metric": {"name": metric, "status": "pass", "score": 1.0, "reason": "ok"}, "error": None},
            nodeid=f"tests/test_x.py::TestX::test_{metric}[{n}]", duration=0.001,
        )  # fmt: skip

    for label, artifacts in (("eval case, 1 metric", False), ("eval case, 1 metric + PNG artifact", True)):
        start = time.perf_counter()
        for n in range(cases):
            record(n, "m", artifacts)
        results[label] = (time.perf_counter() - start) / cases * 1e6
    start = time.perf_counter()
    for n in range(cases):
        recorder.add_plain(nodeid=f"tests/test_y.py::test_{n}", status="pass", duration=0.001)
    results["plain test (--evaljig-all-tests)"] = (time.perf_counter() - start) / cases * 1e6
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--overhead-cases", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="evaljig-bench-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        run = generate(root, args.cases, args.workers)
        took = time.perf_counter() - start
        print(f"generated {args.cases:,} case files in {args.workers} worker folders in {took:.1f} s")
        seconds, peak_mb, line = time_merge(run)
        html_mb = (run / "merged" / "report.html").stat().st_size / 1e6
        print(f"merge: {line}")
        print(f"merge of {args.cases:,} cases: {seconds:.2f} s (target <= {TARGET_SECONDS:.0f} s, ratio "
              f"{seconds / TARGET_SECONDS:.2f}); peak RSS {peak_mb:.0f} MB (target <= {TARGET_MB:.0f} MB, ratio "
              f"{peak_mb / TARGET_MB:.2f}); report.html {html_mb:.1f} MB")  # fmt: skip
        html_s, html_mb = time_html(run)
        limit = BASELINE_HTML_SECONDS * HTML_TARGET_RATIO
        print(f"report.html alone for {args.cases:,} cases: {html_s:.2f} s, {html_mb:.1f} MB (reference "
              f"{BASELINE_HTML_SECONDS:.2f} s: {html_s / BASELINE_HTML_SECONDS:.2f}x, target <= "
              f"{HTML_TARGET_RATIO:.0f}x = {limit:.1f} s, ratio {html_s / limit:.2f})")  # fmt: skip
        for label, micros in plugin_overhead(root / "overhead", args.overhead_cases).items():
            print(f"plugin overhead, {label}: {micros:.0f} µs per record")
    print(f"({os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
