"""HTTP cassettes (vcrpy) that are byte-stable and secret-free.

Recorded against an ephemeral gateway, so the live ``http://127.0.0.1:<port>/v1`` is rewritten
to :data:`CANONICAL_BASE_URL` (the provider fixture's placeholder) and every header except
``content-type`` is dropped: no auth header, no SDK/platform headers that vary by machine. The
key is looked for in every spelling (evaljig-common's ``find_secret``) before anything is written.
Replays match on method, URL and body, so a request that changes by one byte fails loudly.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import vcr
import yaml
from vcr.cassette import Cassette

from evaljig_common import CANONICAL_BASE_URL, SecretHit, find_secret, write_bytes_atomic

KEPT_HEADERS = frozenset({"content-type"})
MATCH_ON = ("method", "scheme", "host", "port", "path", "query", "body")


def _keep_headers(headers: Any) -> dict[str, Any]:
    return {k: v for k, v in dict(headers).items() if k.lower() in KEPT_HEADERS}


def _recording_vcr(live_base_url: str) -> vcr.VCR:
    live = live_base_url.rstrip("/")

    def request(req: Any) -> Any:
        req.uri = req.uri.replace(live, CANONICAL_BASE_URL)
        req.headers = _keep_headers(req.headers)
        return req

    def response(resp: dict[str, Any]) -> dict[str, Any]:
        resp["headers"] = _keep_headers(resp["headers"])
        return resp

    return vcr.VCR(
        record_mode="all",
        match_on=MATCH_ON,
        before_record_request=request,
        before_record_response=response,
        decode_compressed_response=True,
    )


@contextlib.contextmanager
def recording(path: Path, live_base_url: str, *, secret: str) -> Iterator[Cassette]:
    """Record every HTTP call in the block to ``path`` (written atomically after a secret check)."""
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp) / path.name
        with _recording_vcr(live_base_url).use_cassette(str(scratch)) as cassette:
            yield cassette
        data = scratch.read_bytes()
    hit = _find_key(data, secret)
    if hit is not None:
        raise RuntimeError(f"{path}: refusing to write a cassette that contains the api key ({hit.form}, {hit.where})")
    write_bytes_atomic(path, data)


def _find_key(data: bytes, secret: str) -> SecretHit | None:
    """The key in any spelling (evaljig-common's ``find_secret``), in the file and in each body as vcrpy
    stored it: its YAML folds long lines, so a streamed body's events are read from the parsed value."""
    secrets = {"the api key": secret}
    hit = find_secret(data, secrets)
    if hit is not None:
        return hit
    document = yaml.safe_load(data) or {}
    for interaction in document.get("interactions") or []:
        for part in (interaction.get("request") or {}, (interaction.get("response") or {}).get("body") or {}):
            body = part.get("body") if "body" in part else part.get("string")
            if isinstance(body, bytes | str) and (hit := find_secret(body, secrets)) is not None:
                return hit
    return None


def replaying(path: Path) -> contextlib.AbstractContextManager[Cassette]:
    """Play ``path`` back; any request not in it (or changed by a byte) raises."""
    player = vcr.VCR(record_mode="none", match_on=MATCH_ON)  # each recorded call plays once
    return player.use_cassette(str(path))  # type: ignore[no-any-return]
