"""Hostile input is bounded: a crafted cassette is one CassetteError, a hostile upstream cannot grow the recorder.

Loading runs in a subprocess where a crash (the recursion of libyaml's composer) would take
pytest down with it; the upstreams are real servers on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import gzip
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from evaljig_gateway import CassetteError, Gateway, Record, load_cassette

from .openai_upstream import Upstream

HEADER = "interactions:\n- request:\n    body: "
TAIL = (
    "\n    headers: {}\n    method: POST\n    uri: http://127.0.0.1:8000/v1/chat/completions\n"
    "  response:\n    body: {string: ''}\n    status: {code: 200, message: OK}\nversion: 1\n"
)


def _load_in_subprocess(path: Path) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\nfrom pathlib import Path\nfrom evaljig_gateway import CassetteError, load_cassette\n"
        "try:\n    load_cassette(Path(sys.argv[1]))\nexcept CassetteError as exc:\n    print(exc)\n    sys.exit(3)\n"
    )
    return subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)


def test_deep_nesting_is_an_error_naming_the_file_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(HEADER + "[" * 80_000 + TAIL)
    proc = _load_in_subprocess(path)
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-500:])
    assert proc.stdout.startswith(f"{path}: ")
    assert "nested deeper than" in proc.stdout


def test_aliases_are_refused_before_they_expand(tmp_path: Path) -> None:
    lines = ["a0: &a0 [" + ", ".join(["x" * 64] * 10) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 6)]
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines) + "\ninteractions: []\nversion: 1\n")  # 10^6 strings once expanded
    proc = _load_in_subprocess(path)
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-500:])
    assert proc.stdout.startswith(f"{path}: line 1, column ")
    assert "anchors and aliases are not allowed" in proc.stdout


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("interactions: []\nversion: 1\n---\ninteractions: []\n", "more than one YAML document"),
        ("? [a]\n: b\n", "a mapping key must be a scalar"),
        ("interactions: !!python/object:os.system {}\n", "tag"),
        (  # a merge that kept both sides' lines
            HEADER + "''" + TAIL.replace("{code: 200,", "{code: 200, code: 500,"),
            r"line 9, column \d+: the key 'code' is repeated",
        ),
    ],
)
def test_other_yaml_shapes_are_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text(text)
    with pytest.raises(CassetteError, match=message) as caught:
        load_cassette(path)
    assert str(caught.value).startswith(f"{path}: ")


# --- a hostile upstream -----------------------------------------------------------------------------------------


class _Hostile:
    """``/v1/chat/completions``: model ``bomb`` answers a gzip body inflating to 64 MiB; ``endless`` streams SSE
    events until its client leaves (``left`` is set then, ``sent`` counts the bytes)."""

    def __init__(self) -> None:
        self.left = threading.Event()
        self.sent = 0
        self.bomb = gzip.compress(b'{"x": "' + b"a" * (64 << 20) + b'"}', compresslevel=9)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if b"bomb" in body:
            headers = [(b"content-type", b"application/json"), (b"content-encoding", b"gzip")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": self.bomb})
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        event = b'data: {"choices": [{"delta": {"content": "more"}}]}\n\n'
        watcher = asyncio.ensure_future(receive())  # uvicorn's send does not fail once the peer left: ask
        try:
            while not watcher.done():
                await send({"type": "http.response.body", "body": event, "more_body": True})
                self.sent += len(event)
                await asyncio.sleep(0.005)
            self.left.set()
        finally:
            watcher.cancel()


@pytest.fixture
def hostile() -> Iterator[tuple[_Hostile, str]]:
    app = _Hostile()
    with Upstream(app) as upstream:
        yield app, upstream.base_url


def test_an_answer_inflating_past_the_cap_is_refused_and_not_kept(
    tmp_path: Path, hostile: tuple[_Hostile, str]
) -> None:
    _, url = hostile
    cassette = tmp_path / "c.yaml"
    with Gateway(tape=Record(cassette, upstream=url, max_cassette_bytes=1 << 20)) as gw:
        answer = httpx.post(f"{gw.base_url}/chat/completions", json={"model": "bomb", "messages": []}, timeout=60)
        assert answer.status_code == 502
        assert "over the limit of 1,048,576 bytes" in answer.json()["error"]["message"]
        assert gw.recorded == 0
    assert not cassette.exists()


def test_the_recorder_stops_reading_when_its_client_leaves(tmp_path: Path, hostile: tuple[_Hostile, str]) -> None:
    app, url = hostile
    with Gateway(tape=Record(tmp_path / "c.yaml", upstream=url)) as gw:
        body = {"model": "endless", "messages": []}
        with pytest.raises(httpx.ReadTimeout):  # the gateway reads the answer whole: the client gives up, leaves
            httpx.post(f"{gw.base_url}/chat/completions", json=body, timeout=httpx.Timeout(10, read=0.5))
        assert app.left.wait(timeout=30), "the gateway kept reading the upstream after its client left"
        assert [c.status for c in gw.calls()] == [499]
        assert gw.recorded == 0
