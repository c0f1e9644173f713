"""The lighteval preload server: a forked run must behave as an exec'd one, or not happen at all.

A stand-in console script (a Python script of this interpreter, like ``lighteval``'s) reports
what it sees; the server preloads ``fractions`` so a forked run is told apart from a normal one.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaljig_config import _preload_client
from evaljig_config._cli import main as cli_main
from evaljig_config._preload import SERVER_ENV, client_argv, serving
from evaljig_config._preload_server import (
    _interpreter_of,
    _is_script_of_this_python,
    _recording_env_lookups,
    env_differences,
)
from evaljig_config._process_group import run_in_group, stop_process_group

SCRIPT = """\
#!{python}
import json, os, signal, sys, time
print(json.dumps({{
    "argv": sys.argv, "cwd": os.getcwd(), "hf_home": os.environ.get("HF_HOME"), "pgid": os.getpgrp(),
    "pid": os.getpid(), "preloaded": "fractions" in sys.modules, "path0": sys.path[0], "name": __name__,
}}), flush=True)
print("to stderr", file=sys.stderr)
action = os.environ.get("EVALJIG_TEST_ACTION", "")
if action == "sigterm":
    os.kill(os.getpid(), signal.SIGTERM)
if action == "hang":
    open(os.environ["EVALJIG_TEST_PIDFILE"], "w").write(str(os.getpid()))
    time.sleep(600)
sys.exit(int(os.environ.get("EVALJIG_TEST_CODE", "0")))
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "bin" / "fake-cli"
    path.parent.mkdir()
    path.write_text(SCRIPT.format(python=sys.executable), encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def server_env() -> Iterator[dict[str, str]]:
    with serving(modules=["fractions"]) as env:
        yield env


def _run(script: Path, env: dict[str, str], run_dir: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    run_dir.mkdir(parents=True, exist_ok=True)
    code = run_in_group(client_argv([str(script), *args], env), cwd=run_dir, env=env, timeout_s=120)
    stdout = (run_dir / "stdout.txt").read_text(encoding="utf-8")
    seen = json.loads(stdout.splitlines()[0]) if stdout else {}
    return code, seen, (run_dir / "stderr.txt").read_text(encoding="utf-8")


def test_a_forked_run_sees_its_own_argv_cwd_env_group_and_streams(
    script: Path, server_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**server_env, "HF_HOME": str(tmp_path / "hf"), "EVALJIG_TEST_CODE": "3"}

    code, seen, stderr = _run(script, env, tmp_path / "run", "endpoint", "litellm")

    assert code == 3
    assert seen["preloaded"] is True  # it was forked from the server
    assert seen["argv"] == [str(script), "endpoint", "litellm"]
    assert seen["cwd"] == str(tmp_path / "run")
    assert seen["hf_home"] == str(tmp_path / "hf")
    assert seen["path0"] == str(script.parent)
    assert seen["name"] == "__main__"
    assert seen["pgid"] != seen["pid"]  # it joined the client's group, whose leader is the client
    assert stderr == "to stderr\n"  # nothing of ours on the run's stderr


def test_a_script_killed_by_a_signal_ends_its_client_with_that_signal(
    script: Path, server_env: dict[str, str], tmp_path: Path
) -> None:
    code, seen, _ = _run(script, {**server_env, "EVALJIG_TEST_ACTION": "sigterm"}, tmp_path / "run")
    assert seen["preloaded"] is True
    assert code == -signal.SIGTERM


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_stopping_the_clients_group_stops_the_forked_run(
    script: Path, server_env: dict[str, str], tmp_path: Path
) -> None:
    pidfile = tmp_path / "pid"
    env = {**server_env, "EVALJIG_TEST_ACTION": "hang", "EVALJIG_TEST_PIDFILE": str(pidfile)}
    client = subprocess.Popen(client_argv([str(script)], env), env=env, stdout=subprocess.DEVNULL, process_group=0)
    while not pidfile.exists() or not pidfile.read_text():
        assert client.poll() is None, "the client ended before the script started"
        time.sleep(0.05)
    run_pid = int(pidfile.read_text())
    assert os.getpgid(run_pid) == client.pid

    stop_process_group(client, grace_s=10)

    assert client.returncode == -signal.SIGTERM
    deadline = time.monotonic() + 30  # the server reaps it; a generous bound, not a timing assertion
    while not _gone(run_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(run_pid)


def test_a_run_whose_environment_differs_is_refused_and_started_normally(
    script: Path, server_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**server_env, "SOME_TOKEN": "s3cret-value", "EVALJIG_TEST_CODE": "4"}

    code, seen, stderr = _run(script, env, tmp_path / "run")

    assert code == 4
    assert seen["preloaded"] is False  # exec'd, not forked
    assert "differs from the server's in SOME_TOKEN" in stderr
    assert "s3cret-value" not in stderr  # names, never values


def test_a_script_of_another_interpreter_is_refused(server_env: dict[str, str], tmp_path: Path) -> None:
    shell = tmp_path / "shell-cli"
    shell.write_text("#!/bin/sh\necho from-sh\n", encoding="utf-8")
    shell.chmod(0o755)
    run_dir = tmp_path / "run"
    run_dir.mkdir()

    code = run_in_group(client_argv([str(shell)], server_env), cwd=run_dir, env=server_env, timeout_s=120)

    assert code == 0
    assert (run_dir / "stdout.txt").read_text() == "from-sh\n"
    assert "is not a Python script of" in (run_dir / "stderr.txt").read_text()


def test_without_a_server_the_client_starts_the_script_itself(script: Path, tmp_path: Path) -> None:
    env = {**os.environ, SERVER_ENV: str(tmp_path / "nothing.sock")}
    code, seen, stderr = _run(script, env, tmp_path / "run")
    assert (code, seen["preloaded"]) == (0, False)
    assert "no preload server at" in stderr


def test_without_the_variable_runs_are_not_routed() -> None:
    assert client_argv(["/x/lighteval", "a"], {}) == ["/x/lighteval", "a"]
    assert client_argv(["/x/lighteval"], {SERVER_ENV: "/s"})[-2:] == ["/s", "/x/lighteval"]


def test_per_run_keys_and_our_own_variables_may_differ() -> None:
    server = {"HOME": "/root", "HF_HOME": "/a", "PATH": "/bin"}
    run = {"HOME": "/root", "HF_HOME": "/b", "OPENAI_API_KEY": "k", "EVALJIG_X": "1", "PYTEST_CURRENT_TEST": "t"}
    assert env_differences(server, run) == ["PATH"]


@pytest.mark.parametrize(
    ("payload", "fds"),
    [(b"not json", 3), (b"[1, 2]", 3), (b'{"argv": [], "env": {}, "cwd": "/", "pgid": 1}', 3), (b"{}", 0)],
    ids=["garbage", "not-an-object", "empty-argv", "no-descriptors"],
)
def test_a_bad_request_is_answered_and_the_server_keeps_serving(
    payload: bytes, fds: int, script: Path, server_env: dict[str, str], tmp_path: Path
) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as sock:
        sock.connect(server_env[SERVER_ENV])
        socket.send_fds(sock, [payload], [0, 1, 2][:fds])
        reply, _ = _preload_client.receive_message(sock)
    assert reply is not None
    assert reply["refused"].startswith("bad request")

    code, seen, _ = _run(script, server_env, tmp_path / "run")
    assert (code, seen["preloaded"]) == (0, True)


def test_a_silent_connection_does_not_hold_up_other_runs(
    script: Path, server_env: dict[str, str], tmp_path: Path
) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as idle:
        idle.connect(server_env[SERVER_ENV])  # connects and says nothing
        code, seen, _ = _run(script, server_env, tmp_path / "run")
    assert (code, seen["preloaded"]) == (0, True)


def test_the_server_stops_and_removes_its_socket_with_the_block() -> None:
    with serving(modules=["fractions"]) as env:
        path = Path(env[SERVER_ENV])
        assert path.exists()
    assert not path.exists()


def test_the_server_ends_when_its_parent_goes(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    with subprocess.Popen(
        [sys.executable, "-m", "evaljig_config._preload_server", str(path), "fractions"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    ) as server:  # fmt: skip
        assert server.stdout is not None
        assert server.stdout.readline() == b"listening\n"
        assert server.stdin is not None
        server.stdin.close()  # what the kernel does when the parent dies
        assert server.wait(timeout=60) == 0
    assert not path.exists()


def test_the_cli_runs_a_command_beside_a_server_and_passes_its_exit_code(capfd: pytest.CaptureFixture[str]) -> None:
    code = cli_main([
        "lighteval", "preload", "--", sys.executable, "-c",
        f"import os, sys; print(os.path.exists(os.environ[{SERVER_ENV!r}])); sys.exit(7)",
    ])  # fmt: skip
    assert code == 7
    assert capfd.readouterr().out == "True\n"


def test_the_cli_says_in_one_line_when_the_command_is_missing_or_absent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert cli_main(["lighteval", "preload", "--", str(tmp_path / "no-such-command")]) == 2
    assert "no-such-command: cannot run" in capsys.readouterr().err
    assert cli_main(["lighteval", "preload"]) == 2
    assert "give the command to run after --" in capsys.readouterr().err


def test_lookups_are_told_apart_from_scans_of_the_whole_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", "/somewhere")
    with _recording_env_lookups() as looked_up:
        dict(os.environ)  # a prefix scan, as tqdm and fsspec do on import
        list(os.environ.items())
        assert "HF_HOME" not in looked_up
        os.environ.get("HF_HOME")
        _ = "EVALJIG_UNSET_KEY" in os.environ
    assert looked_up == {"HF_HOME", "EVALJIG_UNSET_KEY"}


def test_a_preload_that_looks_up_a_per_run_key_refuses_every_run(
    script: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "reads_hf_home.py").write_text("import os\nCACHE = os.environ.get('HF_HOME')\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    with serving(modules=["fractions", "reads_hf_home"]) as env:
        code, seen, stderr = _run(script, env, tmp_path / "run")
    assert (code, seen["preloaded"]) == (0, False)
    assert "preloading imported or looked up $HF_HOME" in stderr


def test_uv_trampoline_scripts_name_the_python_beside_them(tmp_path: Path) -> None:
    """uv writes console scripts as a /bin/sh trampoline; lighteval's own script in the stack is one."""
    script = tmp_path / "bin" / "lighteval"
    script.parent.mkdir()
    script.write_text(
        "#!/bin/sh\n"
        """'''exec' "$(dirname -- "$(realpath -- "$0")")"/'python' "$0" "$@"\n"""
        "' '''\nimport sys\n",
        encoding="utf-8",
    )
    assert _interpreter_of(script) == script.parent / "python"
    (script.parent / "python").symlink_to(sys.executable)
    assert not _is_script_of_this_python(str(script))  # the same binary, but another environment


def test_a_bad_requests_descriptors_are_closed_by_the_server(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    with subprocess.Popen(
        [sys.executable, "-m", "evaljig_config._preload_server", str(path), "fractions"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    ) as server:  # fmt: skip
        assert server.stdout is not None
        assert server.stdout.readline() == b"listening\n"
        open_fds = Path(f"/proc/{server.pid}/fd")
        baseline = len(list(open_fds.iterdir()))
        for payload in (b"not json", b'{"argv": [], "env": {}, "cwd": "/", "pgid": 1}') * 3:
            with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as sock:
                sock.connect(str(path))
                socket.send_fds(sock, [payload], [0, 1, 2])
                reply, _ = _preload_client.receive_message(sock)
                assert reply is not None
                assert reply["refused"].startswith("bad request")
                assert _preload_client.receive_message(sock) == (None, [])  # the server is done with it
            assert len(list(open_fds.iterdir())) == baseline  # the three descriptors were closed too
        assert server.stdin is not None
        server.stdin.close()
        assert server.wait(timeout=60) == 0
