"""Runner behaviour that needs no real lighteval: key scrubbing on every way out, paths, arguments.

The CLI path runs ``fake_lighteval.py`` as the ``lighteval`` command; the Python path gets
stand-in lighteval modules (a boundary we do not own) that write the key like lighteval does.
"""

from __future__ import annotations

import json
import re
import sys
import types
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from evaljig_config import ProviderSpec, run_cli, run_python
from evaljig_config._cli import main
from evaljig_config._scrub import scrub_secret

from .placeholders import FAKE_KEY_ENV, HOSTILE_KEY, SPEC, leaked


@pytest.fixture
def spec(spec: ProviderSpec, monkeypatch: pytest.MonkeyPatch) -> ProviderSpec:
    """The fake provider with a key whose spelling changes in JSON and URLs."""
    monkeypatch.setenv(FAKE_KEY_ENV, HOSTILE_KEY)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return spec


@pytest.fixture
def tasks_module(tmp_path: Path) -> Path:
    path = tmp_path / "tasks" / "t.py"
    path.parent.mkdir()
    path.write_text("TASKS_TABLE = []\n")
    return path


def test_every_spelling_of_the_key_is_masked_in_place(tmp_path: Path) -> None:
    from evaljig_config._scrub import scrub_text, secret_forms

    spellings = {
        "raw.txt": HOSTILE_KEY.encode(),
        "escaped.json": json.dumps({"api_key": HOSTILE_KEY}).encode(),
        "unicode.json": json.dumps({"api_key": HOSTILE_KEY}, ensure_ascii=False).encode(),
        "url.log": f"GET /v1?key={urllib.parse.quote(HOSTILE_KEY, safe='')}".encode(),
        "form.log": f"key={urllib.parse.quote_plus(HOSTILE_KEY)}".encode(),
    }
    for name, data in spellings.items():
        (tmp_path / name).write_bytes(b"\x00" + data + b"\x00")
    touched = scrub_secret(tmp_path, HOSTILE_KEY)
    assert sorted(p.name for p in touched) == sorted(spellings)
    assert leaked(tmp_path, HOSTILE_KEY) == []
    for name, data in spellings.items():
        assert len((tmp_path / name).read_bytes()) == len(data) + 2  # binary layouts keep their offsets
    assert json.loads((tmp_path / "escaped.json").read_bytes().strip(b"\x00"))["api_key"].strip("*") == ""
    assert scrub_text(f"a {json.dumps(HOSTILE_KEY)} b", HOSTILE_KEY) == 'a "***" b'
    assert len(secret_forms(HOSTILE_KEY)) == len(set(secret_forms(HOSTILE_KEY))) >= 4


def test_cli_path_masks_every_spelling_lighteval_wrote(
    spec: ProviderSpec, fake_lighteval: Path, tasks_module: Path, tmp_path: Path
) -> None:
    run = run_cli(spec, "t|0", custom_tasks=tasks_module, run_dir=tmp_path / "run")
    assert run.scores == {"all": {"em": 0.5}}
    assert (tmp_path / "run" / "stderr.txt").read_text(encoding="utf-8").startswith("using key ***")
    assert leaked(tmp_path / "run", HOSTILE_KEY) == []


class _FakeLighteval:
    """lighteval's Pipeline API as the Python runner uses it; ``save_and_push_results`` can fail."""

    def __init__(self, fail: BaseException | None) -> None:
        self.fail = fail
        self.seen: dict[str, Any] = {}

    def modules(self) -> dict[str, types.ModuleType]:
        fake = self

        class PipelineParameters:
            def __init__(self, **kwargs: Any) -> None:
                self.__dict__.update(kwargs)

        class Pipeline:
            def __init__(self, tasks: str, pipeline_parameters: Any, evaluation_tracker: Any, model_config: Any):
                fake.seen.update(vars(pipeline_parameters), cwd=Path.cwd())
                self.out, self.key = Path(evaluation_tracker.output_dir), model_config.api_key

            def evaluate(self) -> None:
                print(f"evaluating with {self.key}")

            def show_results(self) -> None:
                print("| Task |Metric|Value|\n|all   |em    |  0.5|")

            def save_and_push_results(self) -> None:
                results = self.out / "results" / "m" / "results_2026.json"
                results.parent.mkdir(parents=True)
                url = urllib.parse.quote(self.key, safe="")
                results.write_text(json.dumps({"config": {"api_key": self.key}, "url": f"/v1?key={url}"}))
                (results.parent / "details.raw").write_bytes(self.key.encode())
                if fake.fail is not None:
                    raise fake.fail

        def config(**kwargs: Any) -> types.SimpleNamespace:
            return types.SimpleNamespace(**kwargs)

        def tracker(output_dir: str, save_details: bool) -> types.SimpleNamespace:
            return types.SimpleNamespace(output_dir=output_dir)

        names = ["lighteval", "lighteval.logging", "lighteval.models", "lighteval.models.endpoints"]
        found = {name: types.ModuleType(name) for name in names}
        found["lighteval"].__file__ = "fake"
        found["lighteval.pipeline"] = types.ModuleType("lighteval.pipeline")
        found["lighteval.pipeline"].__dict__.update(
            Pipeline=Pipeline,
            PipelineParameters=PipelineParameters,
            ParallelismManager=types.SimpleNamespace(NONE="none"),
        )
        found["lighteval.logging.evaluation_tracker"] = types.ModuleType("lighteval.logging.evaluation_tracker")
        found["lighteval.logging.evaluation_tracker"].__dict__["EvaluationTracker"] = tracker
        found["lighteval.models.endpoints.litellm_model"] = types.ModuleType("lighteval.models.endpoints.litellm_model")
        found["lighteval.models.endpoints.litellm_model"].__dict__["LiteLLMModelConfig"] = config
        found["diskcache"] = types.ModuleType("diskcache")  # litellm[caching]'s backend, absent here
        found["diskcache"].__dict__["Cache"] = lambda directory=None, **kwargs: types.SimpleNamespace()
        return found


def _install(monkeypatch: pytest.MonkeyPatch, fail: BaseException | None = None) -> _FakeLighteval:
    fake = _FakeLighteval(fail)
    for name, module in fake.modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    return fake


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_python_path_scrubs_when_saving_results_fails(
    spec: ProviderSpec, tasks_module: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: BaseException
) -> None:
    _install(monkeypatch, fail=failure)
    with pytest.raises(type(failure)):
        run_python(spec, "t|0", custom_tasks=tasks_module, run_dir=tmp_path / "run")
    assert (tmp_path / "run" / "out" / "results" / "m" / "details.raw").exists()
    assert leaked(tmp_path / "run", HOSTILE_KEY) == []
    assert Path.cwd() != tmp_path / "run"


def test_python_path_masks_every_spelling_and_resolves_relative_custom_tasks(
    spec: ProviderSpec, tasks_module: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _install(monkeypatch)
    monkeypatch.chdir(tasks_module.parent)
    run = run_python(spec, "t|0", custom_tasks=Path(tasks_module.name), run_dir=Path("..") / "run")
    assert fake.seen["custom_tasks_directory"] == str(tasks_module)  # absolute, found from the run's cwd
    assert fake.seen["cwd"] == tmp_path / "run"
    assert run.stdout_table == "| Task |Metric|Value|\n|all   |em    |  0.5|\n"
    assert leaked(tmp_path / "run", HOSTILE_KEY) == []


def _cli_argv(tmp_path: Path, tasks_module: Path, path: str) -> list[str]:
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(SPEC))
    argv = ["lighteval", "run", str(spec_file), "t|0", "--custom-tasks", str(tasks_module)]
    return [*argv, "--run-dir", str(tmp_path / "run"), "--path", path]


def test_cli_path_crash_is_one_masked_line(
    spec: ProviderSpec,
    fake_lighteval: Path,
    tasks_module: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("EVALJIG_FAKE_LIGHTEVAL", "crash")
    assert main(_cli_argv(tmp_path, tasks_module, "cli")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("evaljig-config: lighteval exited with 1 (see ")
    assert re.search(r"Traceback \(most recent call last\):; AuthenticationError: bad key \*+\n$", err)
    assert leaked(tmp_path / "run", HOSTILE_KEY) == []


def test_python_path_crash_is_one_masked_line_exit_1(
    spec: ProviderSpec,
    tasks_module: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _install(monkeypatch, fail=RuntimeError(f"litellm said:\n bad key {json.dumps(HOSTILE_KEY)}"))
    assert main(_cli_argv(tmp_path, tasks_module, "python")) == 1
    assert capsys.readouterr().err == 'evaljig-config: lighteval failed: RuntimeError: litellm said:; bad key "***"\n'
    assert leaked(tmp_path / "run", HOSTILE_KEY) == []
