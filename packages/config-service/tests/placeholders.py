"""The placeholder provider spec and keys these tests use, and the check that a key leaked nowhere."""

from __future__ import annotations

from pathlib import Path

FAKE_KEY_ENV = "EVALJIG_FAKE_API_KEY"
FAKE_KEY = "sk-evaljig-fake-0000"  # a placeholder, never a real credential

SPEC = {
    "name": "fake-openai",
    "base_url": "http://127.0.0.1:8000/v1",
    "model": "openai/gpt-stub",
    "api_key_env": FAKE_KEY_ENV,
    "generation": {"temperature": 0.0, "max_new_tokens": 8, "seed": 0},
    "retry": {"attempts": 3, "sleep": 0.01, "multiplier": 1.0},
    "timeout": 30,
    "concurrency": 1,
}

HOSTILE_KEY = 'sk-evaljig"fake\\key/é +0000'
"""A placeholder key whose spelling changes in files: quote, backslash, slash, non-ASCII, space, plus."""
FAKE_LIGHTEVAL = Path(__file__).with_name("fake_lighteval.py")


def leaked(folder: Path, secret: str) -> list[str]:
    """Files under ``folder`` holding ``secret`` in any spelling, and which spelling."""
    from evaljig_config import secret_forms

    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found += [f"{path}: {form!r}" for form in secret_forms(secret) if form.encode() in data]
    return found
