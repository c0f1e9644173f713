"""Print a short summary of a nox run from its ``--report`` JSON: ``python ci/nox_summary.py REPORT [TITLE]``.

One line per session (result, time, the CPU its processes used when the noxfile recorded it, the
exact Python of its venv, the reason when it failed), then the CPU in all and the least wall time it
allows on this machine's cores, then one line naming the Pythons the tests passed and failed on, so
``make matrix`` says what it covered.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def venv_python(name: str, nox_dir: Path) -> str:
    """The ``version_info`` of the session's venv (``tests-3.11`` -> ``.nox/tests-3-11``), or ``-``."""
    cfg = nox_dir / re.sub(r"[^\w\-]+", "-", name).strip("-") / "pyvenv.cfg"
    try:
        text = cfg.read_text(encoding="utf-8")
    except OSError:
        return "-"
    found = re.search(r"^version_info\s*=\s*(\S+)", text, re.MULTILINE) or re.search(
        r"^version\s*=\s*(\S+)", text, re.MULTILINE
    )
    return found.group(1) if found else "-"


def duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


def session_cpu(path: Path | None) -> dict[str, float]:
    """``{session: CPU seconds}`` the noxfile recorded for the newest run (noxfile.SESSION_CPU); {} without one."""
    if path is None:
        return {}
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
        return {str(k): float(v) for k, v in recorded["sessions"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def summary(
    report: dict[str, Any],
    nox_dir: Path,
    title: str,
    browser_status_file: Path | None = None,
    coverage_file: Path | None = None,
    cpu: Mapping[str, float] = MappingProxyType({}),
    cores: int = 1,
) -> list[str]:
    # a parametrized session is named "tests" and signed "tests-3.11"
    sessions = [{**s, "name": (s.get("signatures") or [s["name"]])[0]} for s in report.get("sessions", [])]
    if not sessions:
        return [f"==> {title}: no session ran"]
    width = max(len(s["name"]) for s in sessions)
    lines = [f"==> {title}"]
    passed: list[str] = []
    failed: list[str] = []
    for s in sessions:
        python = venv_python(s["name"], nox_dir)
        reason = f"  ({s['reason']})" if s.get("reason") and s["result"] != "success" else ""
        used = cpu.get(s["name"])
        lines.append(
            f"  {s['name']:<{width}}  {s['result']:<7}  {duration(float(s.get('duration') or 0)):>6}"
            + (f"  {used:>6,.0f} s CPU" if used is not None else "")
            + f"  Python {python}{reason}"
        )
        if s["name"].startswith("tests-"):
            version = s["name"].removeprefix("tests-")
            (passed if s["result"] == "success" else failed).append(
                f"{version} ({python})" if python != "-" else version
            )
    ok = sum(s["result"] == "success" for s in sessions)
    lines.append(f"  {ok} of {len(sessions)} sessions succeeded")
    counted = [cpu[s["name"]] for s in sessions if s["name"] in cpu]
    if counted:
        total = sum(counted)
        lines.append(
            f"  CPU: {total:,.0f} s in the sessions' processes; on {cores} core(s) no less than "
            f"{duration(total / max(cores, 1))} of wall time"
        )
    if any(s["name"].startswith("tests-") for s in sessions):
        line = f"  tests passed on Python {', '.join(passed) if passed else 'none'}"
        lines.append(line + (f"; failed on {', '.join(failed)}" if failed else ""))
        lines += [f"  {status}" for status in first_line(browser_status_file)]
    if any(s["name"] == "coverage" and s["result"] == "success" for s in sessions):
        lines += [f"  {total}" for total in first_line(coverage_file)]
    return lines


def first_line(path: Path | None) -> list[str]:
    """The status line a step left (``ci/browser.py``'s browser, ``nox -s coverage``'s total), if any."""
    if path is None:
        return []
    try:
        return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()][:1]
    except OSError:
        return []


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print("usage: nox_summary.py REPORT.json [TITLE]", file=sys.stderr)
        return 2
    path = Path(argv[0])
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(
            f"nox_summary: {path}: no usable nox report ({exc.__class__.__name__}): nox stopped early", file=sys.stderr
        )
        return 1
    title = argv[1] if len(argv) == 2 else "nox sessions"
    browser, coverage = ROOT / ".tools" / "browser-status.txt", ROOT / "reports" / "coverage-total.txt"
    cpu = session_cpu(ROOT / ".tools" / "last-nox-cpu.json")
    print("\n".join(summary(report, ROOT / ".nox", title, browser, coverage, cpu, os.cpu_count() or 1)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
