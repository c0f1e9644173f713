"""The builder factories: provider spec, dataset packages, config and CLI goldens, recorded cassettes.

A build script lists a few of these and calls ``regen_main``: ``evaljig init`` writes such a script
for a team, and evaljig's own ``fixtures/`` are built by one too (``scripts/testing/``), so
``make regen`` runs exactly what teams run. Every output path is
relative to the fixtures folder; the goldens read the provider and dataset through
``ctx.input()``, so they see this run's rebuilt copies.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from evaljig_config import (
    ConfigError,
    LightEvalConfigRenderer,
    ProviderSpec,
    load_provider_spec,
    parse_provider_spec,
    run_cli,
)
from evaljig_fixtures._cassettes import (
    UNKNOWN,
    dump_recorded_for,
    load_recorded_for,
    recorded_for,
    sidecar_relative,
    stale_fields,
    stale_message,
)
from evaljig_fixtures._dataset_load import canonical_json, load_dataset_package
from evaljig_fixtures._dataset_write import DatasetSource, dataset_package_bytes
from evaljig_fixtures._errors import BuildError
from evaljig_fixtures._regen_builder import BuildContext, Builder, Finding, Upstream, fixture_path, write_output
from evaljig_gateway import DEFAULT_IGNORED_FIELDS, CassetteError, Gateway, Record, load_cassette

#: The placeholder key lighteval and litellm send while recording; the gateway ignores keys. Never a real credential.
RECORDING_KEY = "sk-evaljig-recording-0000"


@contextlib.contextmanager
def placeholder_key(spec: ProviderSpec) -> Iterator[None]:
    """The recording placeholder key in the spec's environment variable, for the block only."""
    saved = os.environ.get(spec.api_key_env)
    os.environ[spec.api_key_env] = RECORDING_KEY
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(spec.api_key_env, None)
        else:
            os.environ[spec.api_key_env] = saved


def _name(relative: str, prefix: str) -> str:
    stem = PurePosixPath(relative).name.split(".")[0]
    return f"{prefix}-{''.join(c if c.isalnum() or c in '-_' else '-' for c in stem)}"


def provider_builder(relative: str, spec: Mapping[str, Any], *, name: str | None = None) -> Builder:
    """Writes ``spec`` as canonical JSON (keys in the order given) after evaljig_config has accepted it."""
    data = dict(spec)

    def build(out_dir: Path, ctx: BuildContext) -> list[Path]:
        try:
            parse_provider_spec(data, source=relative)
        except ConfigError as exc:
            raise BuildError(f"provider spec {relative}: evaljig_config rejects it:\n{exc}") from exc
        return [write_output(out_dir, relative, canonical_json(data))]

    return Builder(
        name=name or _name(relative, "provider"), outputs=(relative,), build=build,
        description="provider spec, validated by evaljig_config",
    )  # fmt: skip


def dataset_package_builder(relative: str, source: DatasetSource, *, builder_name: str | None = None) -> Builder:
    """Writes the dataset package of ``source`` (its rows in code, or a JSONL file read at build time)."""

    def build(out_dir: Path, ctx: BuildContext) -> list[Path]:
        return [write_output(out_dir, relative, dataset_package_bytes(source))]

    rows = source.rows if isinstance(source.rows, Path) else "rows in code"
    return Builder(
        name=builder_name or _name(relative, "dataset"), outputs=(relative,), build=build,
        description=source.description or f"dataset package {source.name} from {rows}",
    )  # fmt: skip


def config_golden_builder(relative: str, *, provider: str, name: str | None = None) -> Builder:
    """Writes the provider spec (fixture path ``provider``) rendered as lighteval's ``config.yaml``."""

    def build(out_dir: Path, ctx: BuildContext) -> list[Path]:
        rendered = LightEvalConfigRenderer(load_provider_spec(ctx.input(provider))).render_yaml()
        return [write_output(out_dir, relative, rendered.encode("utf-8"))]

    return Builder(
        name=name or "config-golden", outputs=(relative,), build=build,
        description=f"{provider} rendered as lighteval config.yaml",
    )  # fmt: skip


def cli_stdout_golden_builder(relative: str, *, provider: str, dataset: str, name: str | None = None) -> Builder:
    """Runs the real lighteval CLI on ``dataset`` against an ephemeral gateway answering from its key.

    Writes lighteval's results table (``LightEvalRun.stdout_table``); requires lighteval, so regen
    skips it (leaving the committed file alone) where lighteval is not installed. Listed after a
    ``cassette_builder`` of the same provider and dataset, it uses the table of that builder's run
    when this regen recorded one from an ephemeral gateway (a first build): the same real CLI run,
    through a recording gateway, so lighteval starts once, not twice.
    """

    def build(out_dir: Path, ctx: BuildContext) -> list[Path]:
        table = ctx.local_tables.get(_local_run_key(ctx, provider, dataset))
        if table is None:  # no recording of this run's ephemeral gateway came first: run lighteval
            spec = load_provider_spec(ctx.input(provider))
            package = load_dataset_package(ctx.input(dataset))
            with (
                tempfile.TemporaryDirectory() as tmp,
                placeholder_key(spec),
                Gateway(answers=dict(package.answer_key)) as gw,
            ):
                module = package.extract_to(Path(tmp) / "task")
                table = run_cli(
                    spec.with_base_url(gw.base_url), package.task_spec, custom_tasks=module, run_dir=Path(tmp) / "cli"
                ).stdout_table
        return [write_output(out_dir, relative, table.encode("utf-8"))]

    return Builder(
        name=name or "cli-stdout-golden", outputs=(relative,), build=build, requires=frozenset({"lighteval"}),
        description=f"the real lighteval CLI's results table on {dataset}",
    )  # fmt: skip


def cassette_builder(
    relative: str, *, provider: str, dataset: str, stdout: str | None = None, name: str | None = None
) -> Builder:
    """Records the real lighteval CLI's run on ``dataset`` as a cassette the gateway (or vcrpy) replays.

    The run goes through a recording gateway. Its upstream is ``regen --upstream URL`` (your real
    model, its key read from ``--api-key-env``; lighteval itself only ever sees a placeholder key)
    or, without one, an ephemeral gateway answering from the dataset's answer key. ``stdout`` also
    writes that run's results table: the golden a replaying test compares with. Requires lighteval.

    Beside the cassette it writes what the recording was made for (``<name>.recorded-for.json``:
    model, generation parameters, system prompt, dataset rows, task module, lighteval version), and
    every regen, ``--check`` included and with or without lighteval, compares that with this run's
    provider and dataset: a changed input is drift naming the field and the command that re-records.

    A recording is kept until you re-record it: without ``--upstream``, committed files are carried
    over as they are (so ``regen`` and ``--check`` never replace your model's answers with the local
    gateway's); delete them to record the local gateway again.
    """
    builder_name = name or _name(relative, "cassette")
    sidecar = sidecar_relative(relative)
    recorded = (relative,) if stdout is None else (relative, stdout)
    outputs = (*recorded, sidecar)

    def build(out_dir: Path, ctx: BuildContext) -> list[Path]:
        if ctx.upstream is None and all(fixture_path(ctx.committed, o).is_file() for o in recorded):
            carried = {o: fixture_path(ctx.committed, o) for o in outputs}
            return [write_output(out_dir, o, path.read_bytes()) for o, path in carried.items() if path.is_file()]
        spec = load_provider_spec(ctx.input(provider))
        package = load_dataset_package(ctx.input(dataset))
        out = fixture_path(out_dir, relative)
        with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
            upstream = ctx.upstream
            if upstream is None:
                local = stack.enter_context(Gateway(answers=dict(package.answer_key)))
                upstream = Upstream(local.base_url)
            # started before the placeholder key goes in: the recorder reads the real key from its variable
            recorder = stack.enter_context(
                Gateway(tape=Record(out, upstream=upstream.base_url, api_key_env=upstream.api_key_env))
            )
            stack.enter_context(placeholder_key(spec))
            module = package.extract_to(Path(tmp) / "task")
            run = run_cli(
                spec.with_base_url(recorder.base_url), package.task_spec, custom_tasks=module, run_dir=Path(tmp) / "cli"
            )
        if ctx.upstream is None:  # the ephemeral gateway's answers: the CLI golden's run, which may reuse its table
            ctx.local_tables[_local_run_key(ctx, provider, dataset)] = run.stdout_table
        written = [out]  # the recorder wrote the cassette when it stopped
        if stdout is not None:
            written.append(write_output(out_dir, stdout, run.stdout_table.encode("utf-8")))
        requests = len(load_cassette(out)) if out.is_file() else 0
        summary = recorded_for(spec, package, requests=requests, builder=builder_name)
        written.append(write_output(out_dir, sidecar, dump_recorded_for(summary)))
        return written

    def freshness(ctx: BuildContext) -> list[Finding]:
        cassette = _this_run(ctx, relative)
        if cassette is None:
            return []  # nothing recorded yet: the first regen with lighteval records it
        spec = load_provider_spec(ctx.input(provider))
        rerecord = f"{ctx.command} --only {builder_name} --upstream URL --api-key-env {spec.api_key_env}"
        side = _this_run(ctx, sidecar)
        summary = load_recorded_for(side) if side is not None else None
        if summary is None:
            return [Finding("note", relative, f"{UNKNOWN}: {rerecord}")]
        current = recorded_for(spec, load_dataset_package(ctx.input(dataset)))
        ignore = ctx.match_ignore if ctx.match_ignore is not None else DEFAULT_IGNORED_FIELDS
        fields = stale_fields(summary, current, ignore)
        if not fields:
            return []
        if not isinstance(summary.get("requests"), int):
            with contextlib.suppress(CassetteError, OSError):
                summary["requests"] = len(load_cassette(cassette))
        return [Finding("stale", relative, stale_message(summary, fields, rerecord))]

    return Builder(
        name=builder_name, outputs=outputs, build=build, requires=frozenset({"lighteval"}), freshness=freshness,
        description=f"the real lighteval CLI's exchanges on {dataset}, recorded (regen --upstream: from your model)",
    )  # fmt: skip


def _local_run_key(ctx: BuildContext, provider: str, dataset: str) -> str:
    """What a lighteval run against the ephemeral gateway depends on: this run's provider spec and dataset package."""
    return "".join(hashlib.sha256(ctx.input(relative).read_bytes()).hexdigest() for relative in (provider, dataset))


def _this_run(ctx: BuildContext, relative: str) -> Path | None:
    """The file as this run leaves it: rebuilt, else committed; ``None`` when neither exists."""
    try:
        return ctx.input(relative)
    except BuildError:
        return None
