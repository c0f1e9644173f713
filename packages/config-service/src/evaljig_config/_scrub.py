"""Keep secrets out of what lighteval writes (its results JSON records the api_key in clear).

A key lands in files in more than one spelling: raw, JSON-escaped, URL-encoded, base64... The
spellings are evaljig-common's :func:`~evaljig_common.secret_spellings`, the same list the
gateway's and the fixture builder's cassette scans look for; every one is masked.
"""

from __future__ import annotations

from pathlib import Path

from evaljig_common import secret_spellings, write_bytes_atomic

MIN_SECRET_LENGTH = 4


def secret_forms(secret: str) -> list[str]:
    """Every spelling of ``secret`` that may land in a file, longest first (so none is half-masked)."""
    if len(secret) < MIN_SECRET_LENGTH:
        raise ValueError(f"refusing to scrub a secret shorter than {MIN_SECRET_LENGTH} characters")
    return [text for _, text in secret_spellings(secret)]


def scrub_text(text: str, secret: str) -> str:
    """``text`` with every spelling of ``secret`` replaced by ``***``."""
    for form in secret_forms(secret):
        text = text.replace(form, "***")
    return text


def scrub_secret(root: Path, secret: str) -> list[Path]:
    """Mask every spelling of ``secret`` in every file under ``root``; return the files that held one.

    Each mask has the length of what it hides, so binary formats (parquet, sqlite) keep their layout.
    """
    needles = [form.encode("utf-8") for form in secret_forms(secret)]
    touched = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        data = path.read_bytes()
        clean = data
        for needle in needles:
            clean = clean.replace(needle, b"*" * len(needle))
        if clean != data:
            write_bytes_atomic(path, clean)
            touched.append(path)
    return touched
