"""Which xdist worker ran each test module, read from ``pytest -v -n N`` output (whatever each case's outcome)."""

from __future__ import annotations

import re

_RAN = re.compile(r"^\[(gw\d+)\] \[\s*\d+%\] [A-Z]+ (\S+?)::", flags=re.MULTILINE)


def workers_by_module(output: str) -> dict[str, set[str]]:
    """``{module file name: {worker, ...}}`` from lines like ``[gw0] [ 14%] PASSED path/test_x.py::test_y``."""
    ran: dict[str, set[str]] = {}
    for worker, path in _RAN.findall(output):
        ran.setdefault(path.rsplit("/", 1)[-1], set()).add(worker)
    return ran
