"""``evaljig-config``: render lighteval configs and run lighteval with failures made visible.

    evaljig-config render SPEC [--base-url URL] [--model M] [-o config.yaml]
    evaljig-config lighteval run SPEC TASKS --custom-tasks FILE --run-dir DIR
                   [--path cli|python] [--base-url URL] [--model M] [--max-samples N]

``lighteval run`` exits 1 when any request ended empty after the retry budget (lighteval
itself exits 0 and scores it 0), and 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from evaljig_config.errors import ConfigError, LightEvalUnavailable, RetryBudgetExhausted
from evaljig_config.run_result import LightEvalRun
from evaljig_config.service import LightEvalConfigService
from evaljig_config.spec import ProviderSpec, load_provider_spec


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evaljig-config", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    render = commands.add_parser("render", help="print (or write) the lighteval config.yaml for a provider spec")
    _spec_args(render)
    render.add_argument("-o", "--output", type=Path, help="write here (must end in .yaml) instead of stdout")
    lighteval = commands.add_parser("lighteval", help="run lighteval").add_subparsers(dest="action", required=True)
    run = lighteval.add_parser("run", help="run one evaluation in a fresh run directory")
    _spec_args(run)
    run.add_argument("tasks", help="lighteval task spec, e.g. 'mini_mmlu|0'")
    run.add_argument("--custom-tasks", type=Path, required=True, help="the custom task module")
    run.add_argument("--run-dir", type=Path, required=True, help="a new or empty directory for this run")
    run.add_argument("--path", choices=("cli", "python"), default="cli", help="lighteval CLI or Python API")
    run.add_argument("--max-samples", type=int, help="evaluate only the first N samples")
    return parser


def _spec_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", type=Path, help="provider spec (.json, .yaml or .yml)")
    parser.add_argument("--base-url", help="override the spec's base_url (e.g. an ephemeral gateway)")
    parser.add_argument("--model", help="override the spec's model (keep the openai/ prefix)")


def _load(args: argparse.Namespace) -> ProviderSpec:
    spec = load_provider_spec(args.spec)
    if args.base_url:
        spec = spec.with_base_url(args.base_url)
    if args.model:
        spec = spec.with_model(args.model)
    return spec


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        spec = _load(args)
        if args.command == "render":
            service = LightEvalConfigService(spec)
            if args.output:
                service.write_config(args.output)
                print(f"wrote {args.output}")
            else:
                sys.stdout.write(service.render_yaml())
            return 0
        return _run(spec, args)
    except (ConfigError, ValueError, LightEvalUnavailable) as exc:
        print(f"evaljig-config: {exc}", file=sys.stderr)
        return 2


def _run(spec: ProviderSpec, args: argparse.Namespace) -> int:
    from evaljig_config.runners import run_cli, run_python

    runner = run_cli if args.path == "cli" else run_python
    try:
        run = runner(
            spec, args.tasks, custom_tasks=args.custom_tasks, run_dir=args.run_dir, max_samples=args.max_samples
        )
    except RetryBudgetExhausted as exc:
        print(f"evaljig-config: FAILED: {exc}", file=sys.stderr)
        print(
            f"evaljig-config: lighteval exited 0 and scored these requests 0; run files: {args.run_dir}",
            file=sys.stderr,
        )
        return 1
    _print_summary(run)
    return 0


def _print_summary(run: LightEvalRun) -> None:
    sys.stdout.write(run.stdout_table)
    print(f"\nlighteval ({run.path}) ok: {len(run.files)} file(s) in {run.run_dir}, no request ended empty")
