"""A stand-in for the ``lighteval`` command, copied first on PATH by the runner tests.

Like lighteval it writes the API key into its results (raw, JSON-escaped and URL-encoded) and
prints a results table. ``EVALJIG_FAKE_LIGHTEVAL=crash`` then exits 1 quoting the key;
``EVALJIG_FAKE_LIGHTEVAL=loop`` then starts a child, which starts a
grandchild that ignores SIGTERM; both call the gateway until killed and append their pids to
``pids.txt`` in the working directory (the run directory).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path


def call_forever(base_url: str, model: str) -> None:
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}]}).encode()
    while True:
        request = urllib.request.Request(
            f"{base_url}/chat/completions", data=body, headers={"Content-Type": "application/json"}
        )
        try:
            urllib.request.urlopen(request, timeout=10).read()
        except OSError:
            time.sleep(0.05)


def spawn(role: str, base_url: str) -> None:
    subprocess.Popen([sys.executable, __file__, role, base_url])


def write_results(argv: list[str], key: str) -> str:
    config = Path(argv[argv.index("litellm") + 1]).read_text(encoding="utf-8")
    base_url = next(line.split(": ", 1)[1] for line in config.splitlines() if line.strip().startswith("base_url:"))
    out = Path(argv[argv.index("--output-dir") + 1]) / "results" / "fake" / "results_2026.json"
    out.parent.mkdir(parents=True)
    record = {"config": {"api_key": key}, "request": f"{base_url}/models?key={urllib.parse.quote(key, safe='')}"}
    out.write_text(json.dumps({"results": {"all": {"em": 0.5}}, **record}), encoding="utf-8")
    (out.parent / "details.raw").write_bytes(b"\x00binary " + key.encode() + b" \x00")
    print("| Task |Version|Metric|Value|\n|------|-------|------|----:|\n|all   |       |em    |  0.5|")
    print(f"using key {key} against {base_url}", file=sys.stderr, flush=True)
    return base_url


def main() -> None:
    role = sys.argv[1]
    if role in ("child", "grandchild"):
        with Path("pids.txt").open("a") as pids:
            pids.write(f"{os.getpid()}\n")
        if role == "child":
            spawn("grandchild", sys.argv[2])
        else:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only SIGKILL stops it
        call_forever(sys.argv[2], f"orphan-{role}")
    base_url = write_results(sys.argv, os.environ["OPENAI_API_KEY"])
    if os.environ.get("EVALJIG_FAKE_LIGHTEVAL") == "crash":
        sys.exit(f"Traceback (most recent call last):\nAuthenticationError: bad key {os.environ['OPENAI_API_KEY']}")
    if os.environ.get("EVALJIG_FAKE_LIGHTEVAL") == "loop":
        spawn("child", base_url)
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main()
