"""``--accept GLOB`` / ``--reject GLOB``: keep or undo reviewed changes, and never touch any other file.

A GLOB selects reviewed entries by path (``fnmatch``: ``golden/reporter/*``), by category
(``format-only``, ``value-changed``, ...) or by kind (``golden``, ``fixture``, ``cassette``,
``baseline``). Only files the review lists can be selected, so an accept or reject never reaches
source code or any file outside the goldens, fixtures, cassettes and baselines.

- **reject** restores the base version: ``git checkout BASE -- PATH`` for a changed or removed
  file (index and working tree, so a staged change is undone too); a new file is unstaged and
  deleted.
- **accept** stages the file as it is (``git add -A -- PATH``: a removal is staged as one), the way
  ``cargo insta accept`` turns a pending snapshot into the reviewed one: ``git commit`` then takes
  exactly what was accepted, and ``git diff`` (unstaged) shows what is still to be decided.
"""

from __future__ import annotations

import fnmatch
import subprocess
from collections.abc import Sequence

from evaljig_review._errors import ReviewError
from evaljig_review._review import KINDS, Entry, Review
from evaljig_review._semantic import CATEGORIES


def select(review: Review, pattern: str) -> list[Entry]:
    """The entries ``pattern`` names (category, kind, or a path glob); ``ReviewError`` when none."""
    if pattern in CATEGORIES:
        found = [e for e in review.entries if e.category == pattern]
    elif pattern in KINDS:
        found = [e for e in review.entries if e.kind == pattern]
    else:
        found = [e for e in review.entries if fnmatch.fnmatchcase(e.path, pattern)]
    return sorted(found, key=lambda e: e.path)


def _git(review: Review, *args: str) -> None:
    done = subprocess.run(["git", *args], cwd=review.root, capture_output=True, check=False)
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ReviewError(f"git {' '.join(args)}: {reason[-1] if reason else f'exit {done.returncode}'}")


def reject(review: Review, entries: Sequence[Entry]) -> list[str]:
    """Restore each entry's base version; one line per file saying what was done."""
    done = []
    for entry in entries:
        if entry.status == "added":
            _git(review, "rm", "--cached", "--quiet", "--ignore-unmatch", "--", entry.path)
            target = review.root / entry.path
            if target.is_file():
                target.unlink()
            done.append(f"rejected {entry.path}: new file deleted")
        else:
            _git(review, "checkout", review.base, "--", entry.path)
            done.append(f"rejected {entry.path}: {review.base}'s version restored")
    return done


def accept(review: Review, entries: Sequence[Entry]) -> list[str]:
    """Stage each entry as the working tree has it."""
    done = []
    for entry in entries:
        _git(review, "add", "-A", "--", entry.path)
        done.append(f"accepted {entry.path}: staged ({entry.category})")
    return done
