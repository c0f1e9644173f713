"""The gateway image's commands, run outside a container (no Docker engine runs where evaljig is tested).

The Dockerfile's ``CMD`` and ``HEALTHCHECK`` argv are parsed from the file and run as written,
only the port swapped for a free one: the gateway starts with no config in an empty folder and
binds all interfaces, the healthcheck passes while it serves and fails once it stopped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

DOCKERFILE = Path(__file__).resolve().parents[1] / "Dockerfile"
PORT = "8000"


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) per instruction: comments dropped, ``\\`` continuations joined."""
    joined = re.sub(r"\\\n\s*", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    found = []
    for line in joined.splitlines():
        if line.strip():
            keyword, _, rest = line.strip().partition(" ")
            found.append((keyword.upper(), rest.strip()))
    return found


def exec_form(arguments: str) -> list[str]:
    """A JSON-array (exec form) command; the shell form would hide the argv behind ``/bin/sh -c``."""
    argv = json.loads(arguments)
    assert isinstance(argv, list), arguments
    assert all(isinstance(a, str) for a in argv), arguments
    return argv


def image() -> dict[str, str]:
    found: dict[str, str] = {}
    for keyword, arguments in instructions(DOCKERFILE.read_text(encoding="utf-8")):
        found[keyword] = arguments  # the last one wins, as in Docker
    return found


def healthcheck_argv(arguments: str) -> list[str]:
    options, _, command = arguments.partition("CMD ")
    assert all(o.startswith("--") for o in options.split()), options
    return exec_form(command)


def local(argv: list[str], port: int) -> list[str]:
    """``argv`` with the image's port swapped for ``port`` and its programs taken from this environment."""
    swapped = [a.replace(f":{PORT}/", f":{port}/") if a != PORT else str(port) for a in argv]
    program = Path(sys.executable) if swapped[0] == "python" else Path(sys.executable).with_name(swapped[0])
    return [str(program) if program.exists() else shutil.which(swapped[0]) or swapped[0], *swapped[1:]]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def probe(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=30, check=False)


def test_the_image_is_small_non_root_and_exposes_the_served_port() -> None:
    found = image()
    assert found["FROM"] == "python:3.11-slim"
    assert found["USER"] not in {"", "0", "root"}
    cmd = exec_form(found["CMD"])
    assert found["EXPOSE"] == PORT
    assert cmd[cmd.index("--port") + 1] == PORT
    assert cmd[cmd.index("--host") + 1] == "0.0.0.0"  # reachable from outside the container
    assert "VOLUME" not in found
    assert "--answers" not in cmd  # no mounted config: services: start before checkout
    assert f":{PORT}/_gateway/status" in " ".join(healthcheck_argv(found["HEALTHCHECK"]))


def test_cmd_serves_with_no_config_and_the_healthcheck_follows_it(tmp_path: Path) -> None:
    found, port = image(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALJIG_")}
    check = local(healthcheck_argv(found["HEALTHCHECK"]), port)
    command = local(exec_form(found["CMD"]), port)
    with subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True) as server:
        try:
            assert server.stdout is not None
            assert server.stdout.readline() == f"ready http://0.0.0.0:{port}/v1\n"
            healthy = subprocess.run(
                check, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30, check=False
            )
            assert healthy.returncode == 0, healthy.stderr
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
    assert server.returncode == 0
    down = probe(check, tmp_path, env)
    assert down.returncode != 0
    assert "Connection refused" in down.stderr


@pytest.mark.parametrize("line", ['CMD ["a", "b"]', "CMD a b"])
def test_exec_form_only(line: str) -> None:
    keyword, arguments = instructions(line)[0]
    assert keyword == "CMD"
    if arguments.startswith("["):
        assert exec_form(arguments) == ["a", "b"]
    else:
        with pytest.raises(json.JSONDecodeError):
            exec_form(arguments)
