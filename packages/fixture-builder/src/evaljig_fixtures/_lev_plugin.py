"""pytest plugin ``evaljig_lev``: the fixtures of a LightEval contract (LEV) test, and its failure report.

Registered through the ``pytest11`` entry point, so it loads wherever evaljig-fixtures is
installed; everything here is opt-in. Nothing changes for a test that uses none of the
``lev_*`` fixtures: the failure report is written only for tests that requested ``lev_trace``,
and the LEV summary only lists rows recorded with ``lev(...)``.

Where the fixtures come from (ini options, or override the ``*_path`` fixtures in a conftest)::

    [tool.pytest.ini_options]
    lev_provider = "tests/lighteval/fixtures/providers/acme.json"
    lev_dataset = "tests/lighteval/fixtures/datasets/acme.zip"

Relative paths are read from the folder of the ini file (the rootdir without one).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Generator, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

if TYPE_CHECKING:  # imported by the fixtures on first use: this module loads into every pytest session
    from evaljig_config import ProviderSpec
    from evaljig_fixtures._lev_harness import LevDataset, LevTrace
    from evaljig_gateway import Gateway

#: What lighteval 0.13 and litellm warn about from their own code when a LEV case runs lighteval in-process
#: (``lev_trace.python``): lighteval's task registry calls huggingface_hub with a deprecated argument, and
#: pydantic warns about litellm's typing. Nothing a team can act on, and 11 lines in every LEV run's summary:
#: a case that uses ``lev_trace`` does not show them (``pytest.mark.filterwarnings``; other tests still do).
THIRD_PARTY_WARNINGS = (
    "ignore:Deprecated argument.s. used in 'list_models':FutureWarning",
    "ignore:.*is using the .ReadOnly. qualifier:UserWarning",
)
PROVIDER_INI = "lev_provider"
DATASET_INI = "lev_dataset"
SUMMARY_KEY = "lev"
_TRACE = pytest.StashKey["LevTrace"]()
_SECRETS = pytest.StashKey[set[str]]()


class LevRecorder(Protocol):
    """``lev("LEV-001", calls=40, em=0.7)``: one row of the LEV summary printed at the end of the session."""

    def __call__(self, lev_id: str, **facts: object) -> None: ...


DatasetLoader = Callable[[Path], "LevDataset"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(PROVIDER_INI, "evaljig LEV harness: the provider spec (.json/.yaml) the lev_provider fixture loads")
    parser.addini(DATASET_INI, "evaljig LEV harness: the dataset package (.zip) the lev_dataset fixture extracts")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Hide :data:`THIRD_PARTY_WARNINGS` in the cases that run lighteval (those using ``lev_trace``)."""
    for item in items:
        if "lev_trace" in getattr(item, "fixturenames", ()):
            for spec in THIRD_PARTY_WARNINGS:
                item.add_marker(pytest.mark.filterwarnings(spec))


def _ini_path(config: pytest.Config, name: str, fixture: str) -> Path:
    value = str(config.getini(name) or "").strip()
    if not value:
        raise pytest.UsageError(
            f"evaljig LEV harness: set `{name} = PATH` in your pytest configuration, or override the {fixture} fixture"
        )
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    path = (base / value).resolve()
    if not path.is_file():
        raise pytest.UsageError(f"evaljig LEV harness: ini option {name}: {path} is not a file")
    return path


@pytest.fixture
def lev_provider_path(request: pytest.FixtureRequest) -> Path:
    """The provider spec file: ini option ``lev_provider``. Override it to pick another per folder."""
    return _ini_path(request.config, PROVIDER_INI, "lev_provider_path")


@pytest.fixture
def lev_dataset_path(request: pytest.FixtureRequest) -> Path:
    """The dataset package: ini option ``lev_dataset``. Override it to pick another per folder."""
    return _ini_path(request.config, DATASET_INI, "lev_dataset_path")


@pytest.fixture
def lev_api_key(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, lev_provider_path: Path) -> str:
    """The placeholder key, put in the provider's ``api_key_env`` for the test (the gateway ignores keys).

    The failure report masks it wherever it appears; no real credential is ever needed.
    """
    from evaljig_config import load_provider_spec
    from evaljig_fixtures._lev_harness import LEV_FAKE_KEY

    env = load_provider_spec(lev_provider_path).api_key_env
    monkeypatch.setenv(env, LEV_FAKE_KEY)
    request.node.stash.setdefault(_SECRETS, set()).add(LEV_FAKE_KEY)
    return LEV_FAKE_KEY


@pytest.fixture
def lev_provider(
    request: pytest.FixtureRequest, lev_provider_path: Path, lev_api_key: str, gateway: Gateway
) -> ProviderSpec:
    """The provider spec, pointed at this worker's gateway, its key variable set to ``lev_api_key``.

    In a test that replays a cassette (``evaljig_cassette``) with the dataset too, a recording whose
    inputs no longer match this spec and dataset fails the test here, before lighteval runs.
    """
    from evaljig_config import load_provider_spec

    spec = load_provider_spec(lev_provider_path)
    if "lev_dataset" in request.fixturenames:
        _fail_on_a_stale_recording(request, spec)
    return spec.with_base_url(gateway.base_url)


def _fail_on_a_stale_recording(request: pytest.FixtureRequest, spec: ProviderSpec) -> None:
    """``pytest.fail`` with the stale-recording line when the marked cassette was recorded for other inputs."""
    from evaljig_fixtures import _cassettes
    from evaljig_gateway import DEFAULT_IGNORED_FIELDS

    marker = request.node.get_closest_marker("evaljig_cassette")
    if marker is None or not marker.args:
        return
    cassette = Path(request.node.path).parent / Path(marker.args[0])
    recorded = _cassettes.load_recorded_for(_cassettes.sidecar_path(cassette))
    if recorded is None:  # an older recording: replay, and a miss explains itself
        return
    dataset: LevDataset = request.getfixturevalue("lev_dataset")
    ignore = marker.kwargs.get("ignore")
    fields = _cassettes.stale_fields(
        recorded,
        _cassettes.recorded_for(spec, dataset.package),
        frozenset(ignore) if ignore is not None else DEFAULT_IGNORED_FIELDS,
    )
    if fields:
        builder = recorded.get("builder") or "cassette"
        rerecord = f"your fixture build script with --only {builder} --upstream URL --api-key-env {spec.api_key_env}"
        pytest.fail(f"stale recording {cassette.name}: " + _cassettes.stale_message(recorded, fields, rerecord),
                    pytrace=False)  # fmt: skip


@pytest.fixture(scope="session")
def lev_datasets(tmp_path_factory: pytest.TempPathFactory) -> DatasetLoader:
    """``lev_datasets(zip_path)``: a dataset package verified and extracted once per worker (cached by path)."""
    from evaljig_fixtures._lev_harness import LevDataset

    cache: dict[Path, LevDataset] = {}

    def load(zip_path: Path) -> LevDataset:
        key = Path(zip_path).resolve()
        if key not in cache:
            # a folder not named after the task module: it becomes lighteval's local hf_repo
            cache[key] = LevDataset.extract(key, tmp_path_factory.mktemp(f"lev-{key.stem.split('.')[0]}"))
        return cache[key]

    return load


@pytest.fixture
def lev_dataset(lev_datasets: DatasetLoader, lev_dataset_path: Path) -> LevDataset:
    """The ini's dataset package, extracted (``.task``, ``.module``, ``.rows``, ``.answer_key``)."""
    return lev_datasets(lev_dataset_path)


@pytest.fixture
def lev_gateway(gateway: Gateway, lev_dataset: LevDataset) -> Gateway:
    """The worker's gateway (empty journal) answering from ``lev_dataset``'s answer key."""
    gateway.set_answers(dict(lev_dataset.answer_key))
    return gateway


@pytest.fixture
def lev_trace(request: pytest.FixtureRequest, gateway: Gateway) -> LevTrace:
    """Start runs through it (``lev_trace.cli(...)``, ``.python(...)``, ``.subprocess(...)``) and a failure
    attaches their config, argv, stdout/stderr tails and the gateway journal to the case report."""
    from evaljig_fixtures._lev_harness import LevTrace

    trace: LevTrace = request.node.stash.setdefault(_TRACE, LevTrace(gateway))
    return trace


@pytest.fixture
def lev(request: pytest.FixtureRequest) -> LevRecorder:
    """``lev("LEV-001", calls=40, ...)`` adds a row to the LEV summary printed at the end of the session."""

    def record(lev_id: str, **facts: object) -> None:
        request.node.user_properties.append((SUMMARY_KEY, json.dumps({"id": lev_id, **facts}, sort_keys=True)))

    return record


def _mime(name: str) -> str:
    if name.endswith(".jsonl"):
        return "application/x-ndjson"
    return "text/yaml" if name.endswith(".yaml") else "text/plain"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed test that used ``lev_trace`` attaches its debug files (key masked) for evaljig-report to store."""
    report = yield
    trace = item.stash.get(_TRACE, None)
    if trace is None or report.when != "call" or not report.failed:
        return report
    from evaljig_fixtures._lev_harness import debug_files, scrub
    from evaljig_report import ATTACHMENT_KEY

    secrets = set(item.stash.get(_SECRETS, None) or ())
    for invocation in trace.invocations:
        if invocation.spec is not None:
            secrets.add(os.environ.get(invocation.spec.api_key_env, ""))
    for name, text in debug_files(trace, trace.gateway, report.sections).items():
        attachment = {"name": name, "mime_type": _mime(name), "text": scrub(text, secrets)}
        item.user_properties.append((ATTACHMENT_KEY, attachment))
    return report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The LEV summary: one line per ``lev(...)`` row, sorted by id (nothing when no test recorded one)."""
    rows = []
    for outcome in ("passed", "failed", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            if getattr(report, "when", "call") != "call":
                continue
            for key, value in getattr(report, "user_properties", []):
                if key == SUMMARY_KEY:
                    rows.append((json.loads(value), outcome, report.duration))
    if not rows:
        return
    terminalreporter.write_sep("=", "LEV matrix")
    for facts, outcome, duration in sorted(rows, key=lambda r: r[0]["id"]):
        lev_id = facts.pop("id")
        detail = ", ".join(f"{k}={v}" for k, v in facts.items())
        terminalreporter.write_line(f"{lev_id}  {outcome.upper():6}  {duration:6.1f}s  {detail}")


# --------------------------------------------------------------------------- xdist: in-process cases on one worker


def load_with_modules_together(config: pytest.Config, log: Any, modules: Iterable[str]) -> Any:
    """A ``pytest_xdist_make_scheduler`` result: xdist's ``--dist load`` with ``modules`` (file names) each kept
    together on one worker, every other case its own unit.

    Why: LEV cases on lighteval's Python API import its pipeline into the worker (about 13 s of CPU), once per
    worker that gets one of them; plain ``load`` spreads them over every worker. The ``evaljig init`` scaffold's
    conftest keeps its ``test_python_contract.py`` together, evaljig's own matrix its ``test_lev_api.py``.
    (``xdist_group`` with ``--dist loadgroup`` would say the same, but pytest-xdist 3.8 marks a group through a
    node id field pytest 9 no longer reads, so its groups are spread like any other case.)

    ``def pytest_xdist_make_scheduler(config, log): return load_with_modules_together(config, log, ["test_x.py"])``
    in a ``conftest.py``.

    The units go out largest first (xdist's ``loadscope`` order), so a kept-together module starts on
    one worker while the other workers take the single cases; None (xdist's own choice) unless
    ``--dist load`` was asked for.
    """
    if config.getvalue("dist") != "load":
        return None
    # only under xdist, which calls this hook; pytest-xdist ships no type information
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-not-found,import-untyped,unused-ignore]

    together = frozenset(modules)

    class ModulesTogether(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if path.rsplit("/", 1)[-1] in together else nodeid

    return ModulesTogether(config, log)
