"""The ``evaljig`` command: one front door to every evaljig package's command.

``evaljig gateway ...`` runs exactly what ``evaljig-gateway ...`` runs: the subcommand is looked
up as that package's console-script entry point, so nothing here imports a package's private
modules and a package missing from the environment is one clear line, not a traceback.
``evaljig init`` hands its arguments to ``evaljig_fixtures.init_main``, the scaffolder.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, entry_points, version
from typing import cast

PROG = "evaljig"
#: The meta-package's dependencies, each pinned to its version (see hatch_build.py).
MEMBERS = (
    "evaljig-common",
    "evaljig-corpus",
    "evaljig-gateway",
    "evaljig-config",
    "evaljig-fixtures",
    "evaljig-cases",
    "evaljig-report",
    "evaljig-review",
)
#: ``evaljig <name> ...`` -> the console script it runs, and the distribution providing it.
TOOLS = {
    "gateway": ("evaljig-gateway", "evaljig-gateway"),
    "config": ("evaljig-config", "evaljig-config"),
    "corpus": ("evaljig-corpus", "evaljig-corpus"),
    "fixtures": ("evaljig-fixtures", "evaljig-fixtures"),
    "report": ("evaljig-report", "evaljig-report"),
    "review": ("evaljig-review", "evaljig-review"),
}
#: What ``evaljig[lighteval]`` adds that ``evaljig version`` reports on.
LIGHTEVAL_EXTRA = ("lighteval", "torch")
EXIT_USAGE = 2

_TOOL_LINES = "".join(
    f"  {name:<8} [ARGS...]  run {script} ({PROG} {name} --help)\n" for name, (script, _) in TOOLS.items()
)
USAGE = f"""usage: {PROG} COMMAND [ARGS...]

Offline contract tests for LightEval + LiteLLM eval pipelines.

commands:
  init [ARGS...]      scaffold evaljig's LightEval contract tests into your repository (evaljig init --help)
  version             the installed evaljig packages and the lighteval stack, with their versions
{_TOOL_LINES}"""


def installed_versions(names: Sequence[str]) -> dict[str, str | None]:
    """Each distribution's installed version, ``None`` when it is not installed."""
    found: dict[str, str | None] = {}
    for name in names:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def _version() -> int:
    """One line per package; exit 1 when an evaljig package is missing (the meta-package promises all)."""
    own = installed_versions([PROG])[PROG]
    print(f"{PROG} {own or '(not installed: running from a source checkout)'}")
    members = installed_versions(MEMBERS)
    for name, found in members.items():
        print(f"{name} {found or 'not installed'}")
    hint = f"not installed (pip install '{PROG}[lighteval]')"
    for name, found in installed_versions(LIGHTEVAL_EXTRA).items():
        print(f"{name} {found or hint}")
    return 1 if None in members.values() else 0


@contextmanager
def _argv(argv: list[str]) -> Iterator[None]:
    """``sys.argv`` as the console script would see it, restored afterwards."""
    saved = sys.argv
    sys.argv = argv
    try:
        yield
    finally:
        sys.argv = saved


def _forward(name: str, args: Sequence[str]) -> int:
    """Run the console script behind ``evaljig <name>`` with ``args``, in this process."""
    script, distribution = TOOLS[name]
    found = [e for e in entry_points(group="console_scripts", name=script) if e.dist and e.dist.name == distribution]
    if not found:
        print(f"{PROG}: {PROG} {name} needs {distribution} (pip install {distribution})", file=sys.stderr)
        return EXIT_USAGE
    run = cast(Callable[[], int | None], found[0].load())
    with _argv([script, *args]):
        try:
            code = run()
        except SystemExit as exc:  # argparse's --help and usage errors
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return code or 0


def _init(args: Sequence[str]) -> int:
    """``evaljig_fixtures.init_main(argv)``: the meta-package pins the evaljig-fixtures that has it."""
    from evaljig_fixtures import init_main

    return init_main(list(args))


def main(argv: Sequence[str] | None = None) -> int:
    """``evaljig COMMAND [ARGS...]``; the exit code is the command's."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print(USAGE, end="", file=sys.stderr)
        return EXIT_USAGE
    if args[0] in {"-h", "--help", "help"}:
        print(USAGE, end="")
        return 0
    command, rest = args[0], args[1:]
    if command in {"version", "--version"}:
        return _version()
    if command == "init":
        return _init(rest)
    if command in TOOLS:
        return _forward(command, rest)
    known = ", ".join(["init", "version", *TOOLS])
    print(f"{PROG}: unknown command {command!r} (known: {known}); {PROG} --help", file=sys.stderr)
    return EXIT_USAGE
