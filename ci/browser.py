"""The Chromium that report.html's browser tests drive: found, or installed where that is safe.

``python ci/browser.py ensure`` (``make ci`` runs it first) finds a real Chromium or Chrome
(``EVALJIG_CHROMIUM``, then ``chromium``, ``google-chrome-stable``, ``google-chrome``,
``chromium-browser`` on PATH, never Ubuntu's snap stub), else installs Debian's ``chromium``
with apt when this is Debian and we are root, and writes one status line to
``.tools/browser-status.txt``: the path, or why the browser tests will skip. ``make ci``'s
summary prints that line, so a skipped browser test is never silent. On GitHub's Ubuntu
runners the Chrome the image ships is found (apt's ``chromium`` there is a snap stub).
``python ci/browser.py find`` prints the path (exit 1 without one). Stdlib only: it runs
before any venv exists.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STATUS = ROOT / ".tools" / "browser-status.txt"
CANDIDATES = ("chromium", "google-chrome-stable", "google-chrome", "chromium-browser")
SKIP_REASON = "no Chromium or Chrome found (apt-get install chromium, or set EVALJIG_CHROMIUM)"


def is_snap_stub(path: Path) -> bool:
    """Ubuntu's ``chromium-browser``/``chromium`` without the snap: a launcher of ``/snap/bin``, not a browser."""
    resolved = path.resolve()
    if resolved.parts[:2] == ("/", "snap"):
        return True
    try:
        head = resolved.read_bytes()[:4096]
    except OSError:
        return False
    return head.startswith(b"#!") and b"snap" in head


def find_chromium(env: Mapping[str, str] = os.environ, which: Callable[[str], str | None] = shutil.which) -> str | None:
    """``EVALJIG_CHROMIUM``, else the first real browser of :data:`CANDIDATES` on PATH."""
    explicit = env.get("EVALJIG_CHROMIUM")
    if explicit:
        return explicit
    for name in CANDIDATES:
        found = which(name)
        if found and not is_snap_stub(Path(found)):
            return found
    return None


def is_debian(os_release: Path = Path("/etc/os-release")) -> bool:
    """Debian itself (not Ubuntu, whose apt ``chromium`` is a snap stub)."""
    try:
        fields = dict(line.split("=", 1) for line in os_release.read_text(encoding="utf-8").splitlines() if "=" in line)
    except OSError:
        return False
    return fields.get("ID", "").strip('"') == "debian"


#: Headless Chromium needs none of the packages Debian's ``chromium`` recommends (udev, upower, a
#: notification daemon, the printer dialogs and, through them, avahi, samba and CUPS libraries and
#: daemons): without them apt installs 25 packages instead of 115 (10 s, not 15), and the machine stays closer to bare.
APT_INSTALL = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"]


def install_with_apt() -> str | None:
    """``apt-get install --no-install-recommends chromium`` (quietly); the reason it could not, or None."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for argv in (["apt-get", "update", "-qq"], APT_INSTALL):
        done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            return f"'{' '.join(argv)}' failed: {tail}"
    return None


def ensure() -> str:
    """The status line: ``browser: PATH`` or ``browser: SKIPPED ...``."""
    found = find_chromium()
    if found is None and os.geteuid() == 0 and shutil.which("apt-get") and is_debian():
        print("==> installing Debian's chromium for the report.html browser tests", flush=True)
        failure = install_with_apt()
        found = find_chromium()
        if found is None:
            return f"browser: SKIPPED report.html browser tests: {failure or SKIP_REASON}"
    if found is None:
        return f"browser: SKIPPED report.html browser tests: {SKIP_REASON}"
    return f"browser: {found} (report.html browser tests run)"


def main(argv: list[str]) -> int:
    if argv == ["find"]:
        found = find_chromium()
        print(found or SKIP_REASON)
        return 0 if found else 1
    if argv != ["ensure"]:
        print("usage: browser.py ensure|find", file=sys.stderr)
        return 2
    line = ensure()
    STATUS.parent.mkdir(parents=True, exist_ok=True)
    STATUS.write_text(line + "\n", encoding="utf-8")
    print(f"==> {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
