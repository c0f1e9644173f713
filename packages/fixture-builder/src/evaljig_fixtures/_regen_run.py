"""Run builders into a temporary folder, then swap it into the committed folder or compare it (``--check``).

Nothing in the committed folder changes unless every selected builder succeeded; skipped
builders' files are neither rewritten, deleted nor compared. Drift is found file by file (bytes,
type, mode; a zip's members by name) and shown as a bounded diff. The write-back is all or
nothing (``stage`` then ``swap``, below): an interrupted one is finished or rolled back
(``recover``) by the next run.
"""

from __future__ import annotations

import difflib
import errno
import functools
import hashlib
import io
import os
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from evaljig_common import exchange_paths as _exchange
from evaljig_common import write_bytes_atomic
from evaljig_fixtures._dataset_load import write_below
from evaljig_fixtures._errors import BuildError
from evaljig_fixtures._regen_builder import (
    BuildContext,
    Builder,
    Finding,
    Upstream,
    fixture_path,
    unmet_requirements,
)
from evaljig_fixtures._regen_process import DEFAULT_TIMEOUT_S, BuilderProcess

# --- Byte-for-byte comparison of a rebuilt fixtures folder with the committed one, and its listing.
#
# ``added``: in the committed folder but not rebuilt; ``missing``: rebuilt but not committed;
# ``changed``: both, with different bytes. Text gets a short unified diff, binaries size + sha256.
#
# Nothing on disk is trusted: a fixture is a regular, non-executable file in real folders. A
# committed path that is a symlink (or lies below one), or is no regular file (a FIFO, a
# device), is ``symlink``/``special`` drift whatever it points at, and an executable bit is
# ``mode`` drift: the bytes a symlink leads to are never read as the fixture's.
MAX_DIFF_LINES = 40
_EXEC_BITS = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


@dataclass(frozen=True, slots=True)
class Drift:
    kind: str  # "added" | "missing" | "changed" | "mode" | "symlink" | "special"
    path: str
    committed: bytes | None
    rebuilt: bytes | None
    detail: str = ""
    """For ``symlink``/``special``/``mode``: what the committed entry is (``-> target``, ``a FIFO``, ...)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """What a committed path is, read without following any symlink below the fixtures folder."""

    kind: str  # "absent" | "file" | "symlink" | "special"
    data: bytes | None = None
    executable: bool = False
    detail: str = ""


def list_files(root: Path) -> set[str]:
    """Relative POSIX paths of every non-folder entry under ``root`` (symlinks too, never followed)."""
    if not root.is_dir() or root.is_symlink():
        return set()
    found = set()
    for folder, dirs, names in os.walk(root):  # followlinks=False: a symlinked folder is listed, not entered
        base = Path(folder)
        for name in [*dirs, *names]:
            path = base / name
            if name in dirs and not path.is_symlink():
                continue
            found.add(path.relative_to(root).as_posix())
    return found


def entry(root: Path, relative: str) -> Entry:
    """The committed entry at ``root/relative``; a symlink on the way (``root`` excluded) is never followed."""
    parts = PurePosixPath(relative).parts
    path = root
    for depth, part in enumerate(parts, start=1):
        path = path / part
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:
            return Entry("absent")
        except NotADirectoryError:
            return Entry("absent")
        if stat.S_ISLNK(mode):
            where = "" if depth == len(parts) else f"its folder {'/'.join(parts[:depth])} "
            return Entry("symlink", detail=f"{where}is a symlink to {path.readlink()}")
        if depth < len(parts):
            if not stat.S_ISDIR(mode):
                return Entry("absent")
            continue
        if stat.S_ISDIR(mode):
            return Entry("absent")
        if not stat.S_ISREG(mode):
            return Entry("special", detail=f"is not a regular file ({_file_type(mode)})")
        return Entry("file", data=_read_nofollow(path), executable=bool(mode & _EXEC_BITS))
    return Entry("absent")


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device")):
        if test(mode):
            return name
    return "a block device" if stat.S_ISBLK(mode) else f"mode {stat.filemode(mode)}"


def _read_nofollow(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def read(root: Path, relative: str) -> bytes | None:
    """A committed fixture's bytes; ``None`` when it is absent or no regular file in real folders."""
    return entry(root, relative).data


def compare(relative: str, committed: bytes | Entry | None, rebuilt: bytes | None) -> Drift | None:
    """The drift of one path: its committed entry (or bytes) against this run's rebuilt bytes."""
    found = committed if isinstance(committed, Entry) else Entry("absent" if committed is None else "file", committed)
    if found.kind in ("symlink", "special"):
        return Drift(found.kind, relative, None, rebuilt, found.detail)
    if found.data == rebuilt:
        if found.executable and rebuilt is not None:
            return Drift("mode", relative, found.data, rebuilt, "is executable (a fixture never is)")
        return None
    kind = "missing" if found.data is None else "added" if rebuilt is None else "changed"
    return Drift(kind, relative, found.data, rebuilt)


def unsafe_entries(root: Path) -> list[str]:
    """Every symlink and non-regular file at or below ``root``, as ``path is ...`` (what regen refuses to write)."""
    if root.is_symlink():
        return [f"{root} is a symlink to {root.readlink()}"]
    problems = []
    for relative in sorted(list_files(root)):
        found = entry(root, relative)
        if found.kind in ("symlink", "special"):
            problems.append(f"{root / relative} {found.detail}")
    return problems


def _fingerprint(data: bytes | None) -> str:
    if data is None:
        return "unreadable"
    return f"{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}"


def _text(data: bytes) -> str | None:
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _zip_members(data: bytes) -> dict[str, int] | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return {i.filename: i.CRC for i in archive.infolist()}
    except (zipfile.BadZipFile, ValueError):
        return None


def text_diff(old: str, new: str, old_name: str, new_name: str) -> list[str]:
    """A unified diff of two texts, cut after ``MAX_DIFF_LINES`` lines (then a line saying how many more)."""
    diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), old_name, new_name, lineterm=""))
    if len(diff) > MAX_DIFF_LINES:
        return [*diff[:MAX_DIFF_LINES], f"... {len(diff) - MAX_DIFF_LINES} more diff lines"]
    return diff


def render(drift: Drift) -> list[str]:
    """The listing lines for one drifted file."""
    if drift.kind in ("symlink", "special", "mode"):
        return [f"{drift.kind:<8} {drift.path}  ({drift.detail}; a fixture is a regular, non-executable file)"]
    if drift.kind == "added":
        return [f"added    {drift.path}  (committed, but no builder produces it: {_fingerprint(drift.committed)})"]
    if drift.kind == "missing":
        return [f"missing  {drift.path}  (rebuilt, but not in the committed folder: {_fingerprint(drift.rebuilt)})"]
    lines = [f"changed  {drift.path}"]
    if drift.committed is None or drift.rebuilt is None:
        return lines
    old, new = _text(drift.committed), _text(drift.rebuilt)
    if old is not None and new is not None:
        return lines + [f"  {line}" for line in text_diff(old, new, f"committed/{drift.path}", f"rebuilt/{drift.path}")]
    lines += [f"  committed: {_fingerprint(drift.committed)}", f"  rebuilt:   {_fingerprint(drift.rebuilt)}"]
    old_members, new_members = _zip_members(drift.committed), _zip_members(drift.rebuilt)
    if old_members is not None and new_members is not None:
        differ = sorted(n for n in old_members.keys() | new_members.keys() if old_members.get(n) != new_members.get(n))
        lines.append(f"  zip members that differ: {', '.join(differ) or 'none (only the zip encoding)'}")
    return lines


# --- The write-back, all or nothing: stage the folder's new content beside it, then swap the two.
#
# Everything lives in one work folder next to the target (same filesystem, so renames are atomic)::
#
#     .<name>.regen/new/    the complete new content, staged first
#     .<name>.regen/READY   written once new/ is complete and on disk; holds new/'s inode number
#     .<name>.regen/old/    the previous content (only where the swap needs two renames)
#
# On Linux the swap is one ``renameat2(RENAME_EXCHANGE)``: the target is fully old or fully new at
# every instant. Elsewhere it is two renames, with the target missing in between. An interrupt
# (SIGINT, SIGTERM, a crash, a full disk) at any step is repaired by ``recover``, which every rerun
# calls first: without READY it discards the staging (rolls back); with READY it finishes the swap
# (rolls forward), knowing from the inode whether the target already is the new content.
READY = "READY"
#: The steps of a swap, in order; ``on_step`` hears each name just before that step runs.
STEPS = ("stage", "mark-ready", "exchange", "move-old-aside", "move-new-in", "unmark", "remove-old")

OnStep = Callable[[str], None]


def work_dir(target: Path) -> Path:
    """The work folder beside ``target`` (hidden, and named after it so two targets never share one)."""
    return target.parent / f".{target.name}.regen"


def pending(target: Path) -> bool:
    """Whether an interrupted swap of ``target`` waits for ``recover``."""
    return work_dir(target).exists()


def _fsync_dir(folder: Path) -> None:
    """Make renames and new entries in ``folder`` durable (a crash must not undo a step already taken)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(root: Path) -> None:
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            if not path.is_symlink():
                with path.open("rb") as handle:
                    os.fsync(handle.fileno())
        _fsync_dir(Path(folder))


def stage(target: Path, apply: Callable[[Path], None], on_step: OnStep | None = None) -> None:
    """Copy ``target`` to ``new/``, let ``apply`` change the copy, then mark it READY.

    Until READY exists nothing of ``target`` has changed; an exception here removes the staging.
    """
    work = work_dir(target)
    if work.exists():
        raise BuildError(f"{work} exists: an interrupted regen must be recovered first")
    new = work / "new"
    try:
        _step(on_step, "stage")
        work.mkdir(parents=True)
        if target.exists():
            shutil.copytree(target, new, symlinks=True)
        else:
            new.mkdir()
        apply(new)
        _fsync_tree(new)
        _step(on_step, "mark-ready")
        write_bytes_atomic(work / READY, f"{new.stat().st_ino}\n".encode())
        _fsync_dir(work)
    except BaseException:
        if not (work / READY).exists():
            shutil.rmtree(work, ignore_errors=True)
        raise


def swap(target: Path, on_step: OnStep | None = None) -> None:
    """Put ``new/`` in place of ``target`` (READY must exist), then remove the old content and the work folder."""
    work = work_dir(target)
    old, new = work / "old", work / "new"
    staged = int((work / READY).read_text(encoding="ascii"))
    if not (target.exists() and target.stat().st_ino == staged):
        if not (new.exists() and new.stat().st_ino == staged):
            raise BuildError(f"cannot finish the swap: {new} is not the staged content; inspect {work} by hand")
        if target.exists():
            _step(on_step, "exchange")
            if _exchange(target, new):
                new.rename(old)  # new/ now holds the old content: name it so
            else:
                _step(on_step, "move-old-aside")
                target.rename(old)
                _fsync_dir(work)
                _step(on_step, "move-new-in")
                new.rename(target)
        else:
            _step(on_step, "move-new-in")
            new.rename(target)
        _fsync_dir(target.parent)
        _fsync_dir(work)
    _step(on_step, "unmark")
    (work / READY).unlink()
    _step(on_step, "remove-old")
    shutil.rmtree(work)


def recover(target: Path) -> str | None:
    """Finish or roll back an interrupted swap of ``target``; says which, or None when there was none."""
    work = work_dir(target)
    if not work.exists():
        return None
    if (work / READY).exists():
        swap(target)
        return f"finished an interrupted regen of {target} (its staged content was complete)"
    finished = not (work / "new").exists()
    shutil.rmtree(work)
    if finished:
        return f"removed what an interrupted regen of {target} left behind (its new content was in place)"
    return f"rolled back an interrupted regen of {target} (its staging was incomplete)"


def _step(on_step: OnStep | None, name: str) -> None:
    if on_step is not None:
        on_step(name)


# --- Run builders into a temporary folder, then swap it into the committed folder or compare it (``--check``).
#
# Nothing in the committed folder changes unless every selected builder succeeded; skipped
# builders' files are neither rewritten, deleted nor compared. The write-back is all or nothing
# (``swap``): an interrupted one is finished or rolled back by the next run.
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
    no_lighteval: bool = False
    upstream: Upstream | None = None
    command: str = "evaljig-fixtures regen"
    match_ignore: frozenset[str] | None = None
    timeout_s: float | None = DEFAULT_TIMEOUT_S
    """``--timeout``: one builder's deadline; its whole process group is stopped there (``None``: no deadline)."""
    on_step: OnStep | None = None
    """Hears each ``STEPS`` name before that step of the write-back (tests interrupt it there)."""


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
            no_lighteval=options.no_lighteval,
            upstream=options.upstream,
            command=options.command,
            match_ignore=options.match_ignore,
        )
        with BuilderProcess(selected, ctx) as children:
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
    """Run one builder (``build``: in the builders' own process group, ``BuilderProcess``); what it wrote must
    equal what it returned, and lie inside its outputs."""
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
            target = fixture_path(new, drift.path)
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
