"""``evaljig-report``: merge report folders, compare two runs or a run with its baseline, validate case files."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import orjson

from evaljig_common import StrictJSONError, loads_strict, one_line_errors, write_bytes_atomic, write_text_atomic
from evaljig_report._baseline import DEFAULT_BASELINE, load_base, load_baseline, write_baseline
from evaljig_report._comment import render_comment
from evaljig_report._compare import (
    DEFAULT_ALPHA,
    MUST_PASS,
    Change,
    CompareError,
    RunOutcomes,
    changes_json,
    check_alpha,
    check_tolerance,
    diff,
    load_outcomes,
    must_pass_failures,
    render_markdown,
    unmatched_must_pass,
)
from evaljig_report._discover import MAX_CASE_BYTES, MAX_CASE_DEPTH, Collected, Problem, iter_cases
from evaljig_report._export import FORMATS, RELATIONSHIPS, ExportError, ModelInfo, export_eee
from evaljig_report._layout import DEFAULT_ROOT, MERGED_DIR
from evaljig_report._merge import generated_at, merge
from evaljig_report._publish import MergeError
from evaljig_report._schema import schema_errors
from evaljig_report._summary import append_step_summary


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evaljig-report", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    m = commands.add_parser("merge", help="merge worker, session and shard folders into one report")
    m.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="report folders (any depth) or case.json files")
    m.add_argument("-o", "--out", type=Path, help="output folder (default: PATH/merged for one PATH, else ./merged)")
    m.add_argument("--latest", action="store_true", help="each PATH is a reports root: merge its newest run folder")
    m.add_argument("--validate", action="store_true", help="check every case file against the full JSON Schema")
    m.add_argument("--no-step-summary", action="store_true", help="do not append to $GITHUB_STEP_SUMMARY")
    m.add_argument("--allow-empty", action="store_true", help="exit 0 even when the inputs hold no case")
    m.add_argument("--max-case-bytes", type=_size, default=MAX_CASE_BYTES, help=_SIZE_HELP)
    c = commands.add_parser("compare", help="what regressed, improved, appeared or disappeared between two runs")
    c.add_argument("base", type=Path, help="merged index.json, a merged/ or run folder, or a baseline file")
    c.add_argument("new", type=Path, nargs="?", help="the new run (with --baseline: give only NEW)")
    c.add_argument(
        "--baseline", type=Path, metavar="FILE", help="a blessed baseline (evaljig-report bless) in place of BASE"
    )
    c.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when anything regressed or a case or metric of BASE is missing from NEW",
    )
    c.add_argument("--allow-missing", action="store_true", help="with --fail-on-regression: disappearances pass")
    c.add_argument("--no-step-summary", action="store_true", help="do not append to $GITHUB_STEP_SUMMARY")
    c.add_argument("--tolerance", type=_tolerance, default=0.0, help="score drop ignored (default: %(default)s)")
    c.add_argument("--json", type=Path, metavar="FILE", help="also write every change as JSON")
    _gate_options(c)
    pr = commands.add_parser("comment", help="Markdown for one pull-request comment (marker line, regressions first)")
    pr.add_argument("run", type=Path, nargs="?", metavar="RUN", help=f"default: the newest run under {DEFAULT_ROOT}/")
    against = pr.add_mutually_exclusive_group()
    against.add_argument("--baseline", type=Path, metavar="FILE", help="compare with a blessed baseline")
    against.add_argument("--base", type=Path, metavar="RUN", help="compare with another run")
    pr.add_argument("-o", "--out", type=Path, metavar="FILE", help="write the comment here (default: stdout)")
    pr.add_argument("--allow-missing", action="store_true", help="disappeared cases do not count as blocking")
    pr.add_argument("--tolerance", type=_tolerance, default=0.0, help="score drop ignored (default: %(default)s)")
    _gate_options(pr)
    b = commands.add_parser("bless", help="write a run's results as the committed baseline compare takes")
    b.add_argument("run", type=Path, metavar="RUN", help="merged index.json, a merged/ or run folder")
    b.add_argument("-o", "--out", type=Path, default=Path(DEFAULT_BASELINE), help="default: %(default)s")
    e = commands.add_parser("export", help="write a run in another results format (Every Eval Ever)")
    e.add_argument("run", type=Path, metavar="RUN", help="merged index.json, a merged/ or run folder")
    e.add_argument("--format", choices=FORMATS, required=True, help="eee: Every Eval Ever eval.schema.json")
    e.add_argument("-o", "--out", type=Path, metavar="FILE", help="default: stdout")
    e.add_argument("--model-id", default="unknown", help="the model under test, e.g. openai/gpt-4o-mini")
    e.add_argument("--model-name", default=None, help="its display name (default: the id)")
    e.add_argument("--organization", default="unknown", help="who ran the evaluation (source_organization_name)")
    e.add_argument("--relationship", choices=RELATIONSHIPS, default="first_party", help="default: %(default)s")
    v = commands.add_parser("validate", help="check case files against the JSON Schema")
    v.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    v.add_argument("--max-case-bytes", type=_size, default=MAX_CASE_BYTES, help=_SIZE_HELP)
    return parser


_SIZE_HELP = "case files larger than this are listed as problems, never read (default: %(default)s = 16 MiB)"


def _size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a whole number of bytes > 0")
    return value


def _gate_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--alpha",
        type=_alpha,
        default=DEFAULT_ALPHA,
        help="significance level of Fisher's exact test for repeated cases (default: %(default)s)",
    )
    parser.add_argument(
        "--must-pass",
        action="append",
        default=[],
        metavar="PATTERN",
        help="case id glob (or suite::case_id) that gates on any failure in NEW (repeatable)",
    )


def _alpha(text: str) -> float:
    try:
        return check_alpha(float(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a number between 0 and 1 (exclusive)") from exc


def _tolerance(text: str) -> float:
    try:
        return check_tolerance(float(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a finite number >= 0") from exc


@one_line_errors("evaljig-report")
def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "merge":
        return _merge(args)
    if args.command == "compare":
        return _compare(args)
    if args.command == "comment":
        return _comment(args)
    if args.command == "export":
        return _export(args)
    if args.command == "bless":
        return _bless(args.run, args.out)
    return _validate(args.paths, args.max_case_bytes)


def _latest_run(root: Path) -> Path | None:
    runs = [p for p in root.iterdir() if p.is_dir() and p.name != MERGED_DIR] if root.is_dir() else []
    return max(runs, key=lambda p: (p.stat().st_mtime, p.name), default=None)


def _merge(args: argparse.Namespace) -> int:
    paths: list[Path] = args.paths
    if args.latest:
        latest = [_latest_run(p) for p in paths]
        missing = [str(p) for p, run in zip(paths, latest, strict=True) if run is None]
        if missing:
            print(f"evaljig-report: no run folder under {', '.join(missing)}; nothing to merge", file=sys.stderr)
            return 0 if args.allow_empty else 1
        paths = [run for run in latest if run is not None]
    try:
        generated = generated_at()
    except ValueError as exc:
        print(f"evaljig-report: {exc}", file=sys.stderr)
        return 2
    out = args.out or (paths[0] / MERGED_DIR if len(paths) == 1 and paths[0].is_dir() else Path(MERGED_DIR))
    try:
        result = merge(
            paths, out, validate=args.validate, step_summary=None, generated=generated, max_bytes=args.max_case_bytes
        )
    except MergeError as exc:
        print(f"evaljig-report: {exc}", file=sys.stderr)
        return 2
    if not args.no_step_summary:
        _step_summary(result.summary.read_text(encoding="utf-8"))
    c = result.counts
    print(
        f"evaljig-report: {len(result.rows)} cases ({c['pass']} pass, {c['fail']} fail, {c['error']} error, "
        f"{c['skip']} skip) from {result.files_read} files; {result.duplicates} duplicates merged; "
        f"{len(result.problems)} problems"
    )
    for problem in result.problems[:20]:
        print(f"  problem: {problem.path}: {problem.problem}")
    print(f"report: {result.html.resolve()}")
    if not result.rows and not args.allow_empty:
        where = ", ".join(str(p) for p in paths)
        print(
            f"evaljig-report: no case found in {where}: an empty merge is not a pass (--allow-empty)", file=sys.stderr
        )
        return 1
    return 0


def _export(args: argparse.Namespace) -> int:
    model = ModelInfo(args.model_id, args.model_name, args.organization, args.relationship)
    try:
        text = export_eee(args.run, model)
    except ExportError as exc:
        print(f"evaljig-report: {exc}", file=sys.stderr)
        return 2
    if args.out is None:
        sys.stdout.write(text)
    else:
        write_text_atomic(args.out, text)
        print(f"evaljig-report: wrote {args.out} (Every Eval Ever, eval.schema.json)", file=sys.stderr)
    return 0


def _bless(run: Path, out: Path) -> int:
    try:
        outcomes = load_outcomes(run)
    except CompareError as exc:
        print(f"evaljig-report: {exc}", file=sys.stderr)
        return 2
    doc = write_baseline(out, outcomes)
    metrics = sum(len(c["metrics"]) for c in doc["cases"])
    errors = sum(c["status"] == "error" for c in doc["cases"])
    note = f"; {errors} cases are errors (blessed as they are)" if errors else ""
    cases = len(doc["cases"])
    print(f"evaljig-report: blessed {cases} cases ({metrics} metrics) of {outcomes.source} into {out}{note}")
    return 0


def _compare_inputs(args: argparse.Namespace) -> tuple[Path, Path] | str:
    """(BASE, NEW) from ``BASE NEW`` or ``--baseline FILE NEW``; a message when the arguments do not fit."""
    if args.baseline is not None:
        if args.new is not None:
            return "compare takes --baseline FILE or BASE, not both; fix: compare NEW --baseline FILE"
        return args.baseline, args.base
    if args.new is None:
        return "compare needs BASE and NEW (or NEW --baseline FILE); fix: compare BASE NEW"
    return args.base, args.new


def _changes(base: RunOutcomes, new: RunOutcomes, args: argparse.Namespace) -> list[Change] | None:
    """Must-pass failures, then every change; None (after one line on stderr) for a pattern matching nothing."""
    unmatched = unmatched_must_pass(new, args.must_pass)
    if unmatched:
        print(
            f"evaljig-report: --must-pass {', '.join(map(repr, unmatched))} matches no case of {new.source}; "
            "fix: name a case id (or suite::case_id glob) of the new run",
            file=sys.stderr,
        )
        return None
    return [*must_pass_failures(new, args.must_pass), *diff(base, new, args.tolerance, args.alpha)]


def _gating(args: argparse.Namespace) -> set[str]:
    return {"regressed", MUST_PASS} if args.allow_missing else {"regressed", "disappeared", MUST_PASS}


def _comment(args: argparse.Namespace) -> int:
    run: Path | None = args.run
    if run is None:
        run = _latest_run(Path(DEFAULT_ROOT))
        if run is None:
            print(f"evaljig-report: no run folder under {DEFAULT_ROOT}/; fix: comment RUN", file=sys.stderr)
            return 2
    try:
        new = load_outcomes(run)
        base = None
        if args.baseline is not None:
            base = load_baseline(args.baseline)
        elif args.base is not None:
            base = load_base(args.base)
    except CompareError as exc:
        print(f"evaljig-report: {exc}", file=sys.stderr)
        return 2
    changes = None if base is None else _changes(base, new, args)
    if base is not None and changes is None:
        return 2
    text = render_comment(new, base, changes, gating=_gating(args))
    if args.out is not None:
        write_text_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    return 0


def _compare(args: argparse.Namespace) -> int:
    inputs = _compare_inputs(args)
    if isinstance(inputs, str):
        print(f"evaljig-report: {inputs}", file=sys.stderr)
        return 2
    try:
        base = load_baseline(inputs[0]) if args.baseline is not None else load_base(inputs[0])
        new = load_outcomes(inputs[1])
    except CompareError as exc:
        print(f"evaljig-report: {exc}", file=sys.stderr)
        return 2
    changes = _changes(base, new, args)
    if changes is None:
        return 2
    table = render_markdown(changes, base, new)
    sys.stdout.write(table)
    if not args.no_step_summary:
        _step_summary(table)
    if args.json:
        write_bytes_atomic(args.json, orjson.dumps(changes_json(changes), option=orjson.OPT_INDENT_2))
    failed = sorted({c.kind for c in changes} & _gating(args))
    if args.fail_on_regression and failed:
        print(f"evaljig-report: compare failed: {' and '.join(failed)} (see the table above)", file=sys.stderr)
        return 1
    return 0


def _step_summary(text: str) -> None:
    """Append to ``$GITHUB_STEP_SUMMARY`` when set; a path that cannot be written is a warning, not a failure."""
    if warning := append_step_summary(os.environ.get("GITHUB_STEP_SUMMARY"), text):
        print(f"evaljig-report: warning: {warning}", file=sys.stderr)


def _validate(paths: list[Path], max_bytes: int) -> int:
    bad = 0
    checked = 0
    for item in iter_cases(paths, max_bytes=max_bytes):
        if isinstance(item, Problem):
            bad += 1
            print(f"{item.path}: {item.problem}")
            continue
        if isinstance(item, Collected):
            continue
        checked += 1
        try:
            errors = schema_errors(loads_strict(item.data, max_depth=MAX_CASE_DEPTH))
        except StrictJSONError as exc:
            errors = [f"not valid JSON: {exc}"]
        bad += bool(errors)
        if errors:  # one line per file: the first violation, and how many more
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            print(f"{item.path}: {_one_line(errors[0])}{more}")
    print(f"evaljig-report: {checked} case files checked, {bad} invalid or unreadable")
    return 1 if bad else 0


def _one_line(text: str, limit: int = 300) -> str:
    """A schema message can quote a whole (huge, multi-line) value: keep one short line."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
