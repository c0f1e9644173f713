"""Print a Markdown review of what changed in golden/ since the last commit.

Groups changes by package, test module and test (added / changed / removed) with unified
diffs, ready to paste into a pull request. Standard library and git only.
"""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = "golden"


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def changes() -> list[tuple[str, str]]:
    """(status, path) for every golden file that differs from HEAD, untracked ones included."""
    has_head = (
        subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=ROOT, capture_output=True).returncode == 0
    )
    rows: list[tuple[str, str]] = []
    if has_head:
        for line in git("diff", "--name-status", "--no-renames", "HEAD", "--", GOLDEN).splitlines():
            status, path = line.split("\t", 1)
            rows.append(({"A": "added", "D": "removed"}.get(status[0], "changed"), path))
    for path in git("ls-files", "--others", "--exclude-standard", "--", GOLDEN).splitlines():
        rows.append(("added", path))
    return sorted(set(rows), key=lambda r: r[1])


def _git_no_index(path: str) -> str:
    result = subprocess.run(
        ["git", "diff", "--no-index", "--", "/dev/null", path], cwd=ROOT, capture_output=True, text=True
    )
    return result.stdout


def main() -> int:
    rows = changes()
    if not rows:
        print("## Golden review\n\nNo changes in `golden/` since the last commit.")
        return 0
    grouped: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for status, path in rows:
        parts = Path(path).parts
        package, module = (parts[1], parts[2]) if len(parts) > 3 else (parts[1] if len(parts) > 1 else "?", "")
        grouped[(package, module)].append((status, path))
    counts = {s: sum(1 for st, _ in rows if st == s) for s in ("added", "changed", "removed")}
    print("## Golden review\n")
    print(f"{counts['added']} added, {counts['changed']} changed, {counts['removed']} removed.\n")
    for (package, module), items in sorted(grouped.items()):
        print(f"### `{package}` / `{module}`\n")
        for status, path in items:
            print(f"- **{status}** `{Path(path).name}`")
        print()
        for status, path in items:
            text = _git_no_index(path) if status == "added" else git("diff", "HEAD", "--", path)
            if text.strip():
                print(f"<details><summary>{status}: <code>{Path(path).name}</code></summary>\n")
                print("```diff")
                print(text.rstrip())
                print("```\n</details>\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
