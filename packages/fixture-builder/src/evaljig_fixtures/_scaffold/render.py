"""How ``evaljig init``'s options become the scaffold's files: every value in code is a literal, never pasted text.

A value in generated Python is rendered by ``literal`` (``json.dumps`` for printable ASCII, else
``repr``; either way a string literal that evaluates back to exactly the value), so a ``"`` in a
model name cannot end a string and smuggle in a key such as ``base_url``. Values that also
appear in prose (docstrings, comments, YAML, shell lines) are names ``plain`` accepts:
validated beforehand (provider, key variable, dataset and folder names), so no quoting is needed
there. The model name is validated too (``check_model``), before anything is written.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from importlib.resources import files
from string import Template

from evaljig_fixtures._errors import EvaljigFixturesError

MODEL_PREFIX = "openai/"
#: A model id as OpenAI-compatible servers name them (gpt-4o-mini, meta-llama/Llama-3.1-8B, qwen2.5:7b, ft:...@org).
_MODEL = re.compile(r"^openai/[A-Za-z0-9][A-Za-z0-9._:@+/=-]{0,199}$")
_PLAIN = re.compile(r"^[A-Za-z0-9._/-]*$")
_PLACEHOLDER = re.compile(r"\[\[(\w+)\]\]")


def check_model(model: str) -> str:
    """``model`` when it is litellm's ``openai/`` prefix and a plain model id; ``EvaljigFixturesError`` otherwise."""
    if not _MODEL.match(model):
        raise EvaljigFixturesError(
            f"--model {model[:120]!r}: must be {MODEL_PREFIX!r} followed by a model id of letters, digits and "
            "'.', '_', ':', '@', '+', '=', '/', '-' (at most 200 characters), such as openai/gpt-4o-mini"
        )
    return model


def literal(value: str) -> str:
    """A Python string literal for ``value`` (double-quoted where JSON's escaping is Python's too)."""
    text = json.dumps(value) if value.isascii() and value.isprintable() else repr(value)
    if ast.literal_eval(text) != value:  # pragma: no cover - json.dumps and repr both round-trip these
        raise AssertionError(f"cannot render {value!r} as a literal")
    return text


def literal_parts(parts: tuple[str, ...]) -> str:
    """A tuple literal of path parts: ``("backend", "tests", "lighteval")``."""
    return "(" + ", ".join(literal(p) for p in parts) + ("," if len(parts) == 1 else "") + ")"


def plain(value: str) -> str:
    """``value`` for prose and YAML: a name that needs no quoting anywhere (checked, never escaped)."""
    if not _PLAIN.match(value):  # pragma: no cover - callers validate first; this keeps it so
        raise AssertionError(f"{value!r} is not a plain name")
    return value


def python_template(name: str, values: Mapping[str, str]) -> bytes:
    """A ``.py.tmpl`` of the scaffold with ``$name`` placeholders filled (``string.Template``; every one required)."""
    text = files("evaljig_fixtures").joinpath("data", "scaffold", name).read_text(encoding="utf-8")
    rendered = Template(text).substitute(values)
    ast.parse(rendered)  # generated Python must parse, whatever the options were
    return rendered.encode("utf-8")


def text_template(name: str, values: Mapping[str, str]) -> bytes:
    """A template whose text has ``$`` of its own (a workflow's ``${{ }}``): ``[[name]]`` placeholders, all known."""
    text = files("evaljig_fixtures").joinpath("data", "scaffold", name).read_text(encoding="utf-8")
    unknown = sorted({m for m in _PLACEHOLDER.findall(text) if m not in values})
    if unknown:  # pragma: no cover - a template and its values change together
        raise AssertionError(f"{name}: no value for {', '.join(unknown)}")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text).encode("utf-8")
