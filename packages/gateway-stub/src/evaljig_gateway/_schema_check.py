"""The final check of a generated schema instance: ``jsonschema``, bounded, with no regex engine on generated text.

This module holds what the generator needs without importing ``jsonschema``; the validator itself,
:class:`~evaljig_gateway._jsonschema_keywords.Checker`, is imported the first time an answer is checked.

``jsonschema`` judges what an answer is an instance of, but two of its habits must not reach a
request: it runs ``re.search`` (a backtracking engine) for ``pattern`` and ``patternProperties``,
and some schemas make it do exponential work (``oneOf`` inside ``oneOf`` through ``$ref``).
So the validator used here is ``jsonschema``'s own for the schema's draft (2020-12 by default,
formats as annotations) extended so that:

* every keyword it applies spends steps from the request's ``OutputBudget`` (a ``$ref`` and the
  members of list-valued keywords more), so checking stops at the budget;
* ``pattern`` accepts the strings the generator drew for that pattern (they match by
  construction) and fails any other string with an "unknown" error: a pessimistic answer, so a
  value judged valid is valid. That holds where failing more can only make the verdict stricter;
  ``not``, ``oneOf``, ``if`` and ``contains`` with ``maxContains`` (where a failure can make the
  whole pass) are re-implemented three-valued: a subschema with a definite error fails, one whose
  only errors are unknown is unknown, and a verdict that depends on an unknown raises
  :class:`UncheckableError` (the gateway then answers 400: it cannot vouch for the value);
  ``patternProperties`` (and ``additionalProperties``/``unevaluatedProperties`` beside it, which
  search the patterns too) raise it for an object with keys;
* ``uniqueItems`` compares canonical forms in a set (linear, where ``jsonschema``'s fallback is
  quadratic), with ``1`` and ``1.0`` equal and ``true`` apart from ``1``, as JSON Schema says.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["UncheckableError", "canonical"]


class UncheckableError(ValueError):
    """The value cannot be checked against the schema without running a regex on it (or the schema is broken)."""


def canonical(value: Any) -> bytes:
    """A key equal for values JSON Schema calls equal (``1`` and ``1.0``; ``true`` is not ``1``; key order ignored)."""
    try:
        return orjson.dumps(_normal(value), option=orjson.OPT_SORT_KEYS)
    except TypeError:  # an integer past 64 bits from a schema's const/enum
        return repr(_normal(value)).encode()


def _normal(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    return value
