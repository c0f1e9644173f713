"""The lighteval custom task module shipped in every dataset package, rendered from one template."""

from __future__ import annotations

from importlib.resources import files
from string import Template

LIGHTEVAL_VERSION = "0.13"
TEMPLATE = "task_module.py.tmpl"


def render_task_module(task: str) -> str:
    """The module source for ``task`` (a Python identifier; it names the config, the prompt and the task)."""
    if not task.isidentifier():
        raise ValueError(f"task name {task!r} is not a Python identifier")
    text = files("evaljig_fixtures").joinpath("data", TEMPLATE).read_text(encoding="utf-8")
    return Template(text).substitute(task=task, lighteval_version=LIGHTEVAL_VERSION)
