"""``--evaljig-repeats K``: run every tool-eval case K times, each repeat one item running the tool once.

LLM-backed tools are noisy: one run that flips pass -> fail says little. With ``K > 1`` each case
becomes K items (``test_case[<id>-repeat<n>of<K>]``), each running the tool once and recording its
metrics with ``attempt`` (1..K) and ``attempts`` (K); the reporter keeps the attempts apart and the
merge folds them into runs and passes per metric (pass^k, pass@k). Every item is still one
schedulable unit, so under xdist each (case, repeat) runs its tool exactly once, on the worker that
records it. Without the option (or with ``K = 1``) nothing changes: one item per case, the same ids,
records without ``attempt``.
"""

from __future__ import annotations

import os

import pytest

#: The option's destination (``config.getoption``) and the environment variable that sets its default.
REPEATS_DEST = "evaljig_repeats"
REPEATS_ENV = "EVALJIG_REPEATS"
#: The fixture/parameter holding a case item's repeat number (1 when the case is not repeated).
REPEAT_PARAM = "evaljig_repeat"
MAX_REPEATS = 1000


def _repeats(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_REPEATS:
        raise pytest.UsageError(f"--evaljig-repeats {text!r}: must be a whole number from 1 to {MAX_REPEATS}")
    return value


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("evaljig-cases", "evaljig tool evals").addoption(
        "--evaljig-repeats",
        dest=REPEATS_DEST,
        metavar="K",
        default=None,
        help=f"run every ToolEval case K times, one item per repeat (default: ${REPEATS_ENV}, else 1)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """A bad K (option or environment) is one usage error before anything is collected."""
    repeats(config)


def repeats(config: pytest.Config) -> int:
    """K for this session: the option, else ``$EVALJIG_REPEATS``, else 1 (a bad value is a usage error)."""
    raw = config.getoption(REPEATS_DEST, default=None) or os.environ.get(REPEATS_ENV) or "1"
    return _repeats(str(raw))


def repeat_id(case_id: str, repeat: int, total: int) -> str:
    """The parametrize id of one repeat: ``<case id>-repeat<n>of<K>``."""
    return f"{case_id}-repeat{repeat}of{total}"
