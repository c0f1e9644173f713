"""Keep secrets out of what lighteval writes (its results JSON records the api_key in clear)."""

from __future__ import annotations

from pathlib import Path

from evaljig_config.atomic import write_bytes_atomic


def scrub_secret(root: Path, secret: str) -> list[Path]:
    """Mask ``secret`` in every file under ``root``; return the files that contained it.

    The mask has the secret's length, so binary formats (parquet, sqlite) keep their layout.
    """
    if len(secret) < 4:
        raise ValueError("refusing to scrub a secret shorter than 4 characters")
    needle = secret.encode("utf-8")
    mask = b"*" * len(needle)
    touched = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        data = path.read_bytes()
        if needle in data:
            write_bytes_atomic(path, data.replace(needle, mask))
            touched.append(path)
    return touched
