"""Run builders into a temporary folder, then swap it into the committed folder or compare it (``--check``).

Nothing in the committed folder changes unless every selected builder succeeded; skipped
builders' files are neither rewritten, deleted nor compared. The write-back is all or nothing
(``swap``): an interrupted one is finished or rolled back by the next run.
"""

from __future__ import annotations

import errno
import functools
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from evaljig_fixtures._datasets.extract import write_below
from evaljig_fixtures._errors import BuildError
from evaljig_fixtures._regen.builder import Builder
from evaljig_fixtures._regen.context import BuildContext, Finding, Upstream, unmet_requirements
from evaljig_fixtures._regen.drift import Drift, compare, entry, list_files, read, render, unsafe_entries
from evaljig_fixtures._regen.isolate import DEFAULT_TIMEOUT_S, Builders
from evaljig_fixtures._regen.swap import OnStep, pending, recover, stage, swap

Echo = Callable[[str], None]
EXIT_OK, EXIT_FAILED = 0, 1


@dataclass(slots=True)
class BuildResult:
    """One builder in this run: ``ok`` (with the files that differ from the committed ones), skipped or failed."""

    builder: Builder
    status: str  # "ok" | "skipped" | "failed"
    reason: str = ""
    drifts: list[Drift] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    """The builder's ``freshness`` findings: ``stale`` ones are drift (a recording made for other inputs)."""

    @property
    def stale(self) -> list[Finding]:
        return [f for f in self.findings if f.kind == "stale"]


@dataclass(frozen=True, slots=True)
class RegenOptions:
    out_dir: Path
    check: bool = False
    lighteval: bool = False
    upstream: Upstream | None = None
    command: str = "evaljig-fixtures regen"
    match_ignore: frozenset[str] | None = None
    timeout_s: float | None = DEFAULT_TIMEOUT_S
    """``--timeout``: one builder's deadline; its whole process group is stopped there (``None``: no deadline)."""
    on_step: OnStep | None = None
    """Hears each ``swap.STEPS`` name before that step of the write-back (tests interrupt it there)."""


def run_regen(selected: Sequence[Builder], registry: Sequence[Builder], options: RegenOptions, echo: Echo) -> int:
    """Build ``selected``; unowned committed files count as drift only when the whole registry ran."""
    if options.check and pending(options.out_dir):
        echo(f"regen --check: an interrupted regen of {options.out_dir} is pending; run `{options.command}`")
        return EXIT_FAILED
    if options.check and options.out_dir.is_symlink():
        echo(
            f"regen --check: drift: {options.out_dir} is a symlink to {options.out_dir.readlink()} "
            "(a fixtures folder is a real folder; regen never writes through a symlink)"
        )
        return EXIT_FAILED
    if not options.check:
        _ensure_writable_parent(options.out_dir)
        _refuse_symlinks(options.out_dir)
        recovered = recover(options.out_dir)
        if recovered is not None:
            echo(f"regen: {recovered}")
    with tempfile.TemporaryDirectory(prefix="evaljig-regen-") as tmp:
        staging = Path(tmp)
        ctx = BuildContext(
            committed=options.out_dir,
            staging=staging,
            check=options.check,
            lighteval=options.lighteval,
            upstream=options.upstream,
            command=options.command,
            match_ignore=options.match_ignore,
        )
        with Builders(selected, ctx) as children:
            results = [
                _run_one(i + 1, len(selected), b, ctx, echo, functools.partial(children.run, i, options.timeout_s))
                for i, b in enumerate(selected)
            ]
        stray: list[Drift] = []
        if len(selected) == len(registry):
            for relative in sorted(list_files(options.out_dir)):
                if not any(b.owns(relative) for b in registry):
                    found = compare(relative, entry(options.out_dir, relative), None)
                    stray.extend([found] if found is not None else [])
        reported = {d.path for o in results for d in o.drifts} | {d.path for d in stray}
        for relative in sorted(list_files(options.out_dir) - reported):  # skipped or unselected builders' files too
            unsafe = entry(options.out_dir, relative)
            if unsafe.kind in ("symlink", "special"):
                stray.append(Drift(unsafe.kind, relative, None, None, unsafe.detail))
        failed = [o for o in results if o.status == "failed"]
        if failed:
            echo(
                f"regen: {len(failed)} builder(s) failed ({', '.join(o.builder.name for o in failed)}); nothing written"
            )
            return EXIT_FAILED
        if options.check:
            return _report_check(results, stray, options.out_dir, echo, options.command)
        return _apply(results, stray, options, echo)


def _ensure_writable_parent(out_dir: Path) -> None:
    """Refuse an output folder that cannot exist (a file on its way) before any builder runs.

    The staging folder sits next to ``out_dir``, so an OSError there would otherwise name it, not the
    folder the user gave.
    """
    for folder in (out_dir, *out_dir.parents):
        if folder.exists():
            if not folder.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(out_dir))
            return


def _refuse_symlinks(out_dir: Path) -> None:
    """Regen writes real files in real folders only: a symlink at or below ``out_dir`` would be written through.

    Checked before any builder runs; ``--check`` reports the same entries as drift instead.
    """
    unsafe = unsafe_entries(out_dir)
    if unsafe:
        more = f" (and {len(unsafe) - 1} more)" if len(unsafe) > 1 else ""
        raise BuildError(
            f"refused: {unsafe[0]}{more}: regen never writes through a symlink or into a special file; "
            "fix: replace it with a real folder or file (or delete it) and rerun"
        )


def _run_one(
    index: int, total: int, builder: Builder, ctx: BuildContext, echo: Echo, build: Callable[[], list[Path]]
) -> BuildResult:
    head = f"[{index}/{total}] {builder.name}: {', '.join(builder.outputs)} ..."
    unmet = unmet_requirements(builder.requires, ctx)
    if unmet:
        reason = "; ".join(unmet)
        findings = _freshness(builder, ctx)
        stale = " and STALE" if any(f.kind == "stale" for f in findings) else ""
        echo(f"{head} skipped ({reason}){stale}")
        return BuildResult(builder, "skipped", reason, findings=findings)
    try:
        produced = _build(builder, ctx, build)
    except Exception as exc:  # any builder bug is reported, and the committed folder stays as it was
        detail = str(exc) if isinstance(exc, BuildError) else f"{type(exc).__name__}: {exc}"
        echo(f"{head} FAILED")
        echo("\n".join(f"    {line}" for line in detail.splitlines()))
        return BuildResult(builder, "failed", detail)
    committed = {r for r in list_files(ctx.committed) if builder.owns(r)}
    drifts = [
        d
        for r in sorted(produced | committed)
        if (d := compare(r, entry(ctx.committed, r), read(ctx.staging, r) if r in produced else None)) is not None
    ]
    findings = _freshness(builder, ctx)
    status = "ok" if not drifts else "DRIFT" if ctx.check else f"updated ({len(drifts)} file(s))"
    if any(f.kind == "stale" for f in findings):
        status = "STALE" if status == "ok" else f"{status}, STALE"
    echo(f"{head} {status}")
    return BuildResult(builder, "ok", drifts=drifts, findings=findings)


def _freshness(builder: Builder, ctx: BuildContext) -> list[Finding]:
    """The builder's ``freshness`` findings; a check that raises is a stale finding naming why, never a crash."""
    if builder.freshness is None:
        return []
    try:
        return builder.freshness(ctx)
    except Exception as exc:  # a check must not hide the rest of the report
        detail = str(exc) if isinstance(exc, BuildError) else f"{type(exc).__name__}: {exc}"
        return [Finding("stale", builder.outputs[0], f"its freshness could not be checked: {detail}")]


def _finding_lines(results: Sequence[BuildResult]) -> list[str]:
    return [f"{f.kind:<8} {f.path}: {f.text}" for o in results for f in o.findings]


def _build(builder: Builder, ctx: BuildContext, build: Callable[[], list[Path]]) -> set[str]:
    """Run one builder (``build``: in the builders' own process group, ``isolate``); what it wrote must equal what it
    returned, and lie inside its outputs."""
    before = list_files(ctx.staging)
    returned = set()
    for path in build():
        try:
            returned.add(path.resolve().relative_to(ctx.staging.resolve()).as_posix())
        except ValueError:
            raise BuildError(f"builder {builder.name}: returned {path}, outside its out_dir") from None
    written = list_files(ctx.staging) - before
    problems = [f"wrote {r} but did not return it" for r in sorted(written - returned)]
    problems += [f"returned {r} but did not write it" for r in sorted(returned - written)]
    outputs = ", ".join(builder.outputs)
    problems += [f"wrote {r}, outside its outputs {outputs}" for r in sorted(returned) if not builder.owns(r)]
    if problems:
        raise BuildError("\n".join(f"builder {builder.name}: {p}" for p in problems))
    return returned


def _skipped_lines(results: Sequence[BuildResult]) -> list[str]:
    return [
        f"skipped  {o.builder.name}: {o.reason}; its committed files were not checked ({', '.join(o.builder.outputs)})"
        for o in results
        if o.status == "skipped"
    ]


def _report_check(
    results: Sequence[BuildResult], stray: Sequence[Drift], out_dir: Path, echo: Echo, command: str
) -> int:
    drifts = [d for o in results for d in o.drifts] + list(stray)
    stale = [f for o in results for f in o.stale]
    built = [o for o in results if o.status == "ok"]
    skipped = len(results) - len(built)
    if not drifts and not stale:
        files = sum(1 for r in list_files(out_dir) if any(o.builder.owns(r) for o in built))
        echo(f"regen --check: clean: {len(built)} builder(s), {files} file(s) match {out_dir}; {skipped} skipped")
        for line in [*_finding_lines(results), *_skipped_lines(results)]:
            echo(line)
        return EXIT_OK
    counts = ", ".join(f"{sum(d.kind == k for d in drifts)} {k}" for k in ("changed", "missing", "added"))
    counts += f", {len(stale)} stale recording(s)" if stale else ""
    total = len(drifts) + len(stale)
    echo(f"regen --check: {total} drifted file(s) in {out_dir} ({counts}); {skipped} builder(s) skipped")
    for drift in drifts:
        for line in render(drift):
            echo(line)
    for line in [*_finding_lines(results), *_skipped_lines(results)]:
        echo(line)
    if drifts and command == "evaljig-fixtures regen":
        echo("fix: run `evaljig-fixtures regen` from the repository root and commit fixtures/ (never edit it by hand)")
    elif drifts:  # a team's build script: the command that rebuilds is that script, not evaljig's own
        echo(f"fix: run `{command}` and commit {out_dir.name}/ (never edit it by hand)")
    return EXIT_FAILED


def _apply(results: Sequence[BuildResult], stray: Sequence[Drift], options: RegenOptions, echo: Echo) -> int:
    out_dir = options.out_dir
    drifts = [d for o in results for d in o.drifts]

    def change(new: Path) -> None:
        for drift in drifts:
            target = new.joinpath(*PurePosixPath(drift.path).parts)
            if drift.rebuilt is not None:  # no symlink below new/ is followed, should one appear after the check
                write_below(new, PurePosixPath(drift.path).parts, drift.rebuilt)
            else:
                target.unlink()
                _prune_empty_parents(target.parent, new)

    if drifts:
        stage(out_dir, change, options.on_step)
        swap(out_dir, options.on_step)
    written = sum(d.rebuilt is not None for d in drifts)
    removed = len(drifts) - written
    for drift in stray:
        echo(f"left in place: {drift.path} (no builder produces it; delete it by hand if it is stale)")
    built = [o for o in results if o.status == "ok"]
    files = sum(1 for r in list_files(out_dir) if any(o.builder.owns(r) for o in built))
    skipped = len(results) - len(built)
    echo(
        f"regen: {len(built)} builder(s), {files} file(s) in {out_dir}: {written} written, {removed} removed, "
        f"{files - written} unchanged; {skipped} skipped"
    )
    for line in _finding_lines(results):
        echo(line)
    for line in _skipped_lines(results):
        echo(line.replace("were not checked", "were left untouched"))
    stale = [f for o in results for f in o.stale]
    if stale:  # written, but a recording no longer fits its inputs: not done until it is re-recorded
        echo(f"regen: {len(stale)} stale recording(s): re-record as shown above")
        return EXIT_FAILED
    return EXIT_OK


def _prune_empty_parents(folder: Path, root: Path) -> None:
    while folder != root and folder.is_relative_to(root) and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
