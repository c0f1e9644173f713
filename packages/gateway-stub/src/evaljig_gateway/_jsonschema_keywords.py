"""The final check of a generated schema instance: ``jsonschema``, bounded, with no regex engine on generated text.

Apart from ``_schema_instance`` so that ``jsonschema`` (and ``referencing``, ``rpds``, ``attrs``) is
imported the first time an answer is checked, not by every process that imports the gateway (its
pytest plugin is loaded by every pytest run of a project that installs it); what the generator
needs without ``jsonschema`` (:class:`UncheckableError`, :func:`canonical`,
:func:`shown`) lives there.

``jsonschema`` judges what an answer is an instance of, but two of its habits must not reach a
request: it runs ``re.search`` (a backtracking engine) for ``pattern`` and ``patternProperties``,
and some schemas make it do exponential work (``oneOf`` inside ``oneOf`` through ``$ref``).
So the validator used here is ``jsonschema``'s own for the schema's draft (2020-12 by default,
the formats the generator makes asserted) extended so that:

* every keyword it applies spends steps from the request's ``OutputBudget`` (a ``$ref`` and the
  members of list-valued keywords more), so checking stops at the budget;
* ``pattern`` accepts the strings the generator drew for that pattern (they match by
  construction) and fails any other string with an "unknown" error: a pessimistic answer, so a
  value judged valid is valid. That holds where failing more can only make the verdict stricter;
  ``not``, ``oneOf``, ``if`` and ``contains`` with ``maxContains`` (where a failure can make the
  whole pass) are re-implemented three-valued: a subschema with a definite error fails, one whose
  only errors are unknown is unknown, and a verdict that depends on an unknown is an unknown error
  in turn (so an ``anyOf`` whose other branch passes still passes); only when the answer's own
  verdict hangs on one does the check raise :class:`UncheckableError` (the gateway then answers
  400: it cannot vouch for the value);
  ``patternProperties`` (and ``additionalProperties``/``unevaluatedProperties`` beside it, which
  search the patterns too) raise it for an object with keys;
* ``uniqueItems`` compares canonical forms in a set (linear, where ``jsonschema``'s fallback is
  quadratic), with ``1`` and ``1.0`` equal and ``true`` apart from ``1``, as JSON Schema says.
"""

from __future__ import annotations

import datetime
import ipaddress
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import referencing.exceptions
from jsonschema.protocols import Validator  # type: ignore[import-untyped,unused-ignore]

from evaljig_gateway._limits import BudgetExceededError, OutputBudget
from evaljig_gateway._schema_instance import UncheckableError, canonical, shown

#: Steps one keyword application costs (``jsonschema`` spends microseconds on each, the generator's steps less).
KEYWORD_STEPS = 5
#: Steps a ``$ref``/``$dynamicRef`` costs (a lookup in the referencing registry).
REF_STEPS = 10


def _is_email(value: str) -> bool:
    """``local@host.tld``: one ``@``, no white space, a lower-case ASCII top-level label."""
    local, _, domain = value.partition("@")
    host, dot, tld = domain.rpartition(".")
    if not (local and host and dot) or "@" in domain or any(c.isspace() for c in value):
        return False
    return tld.isascii() and tld.isalpha() and tld.islower()


#: The formats the generator makes, each a check of a string (a ``ValueError`` fails it too).
_FORMAT_CHECKS: dict[str, Callable[[str], object]] = {
    "date": lambda value: len(value) == 10 and datetime.date.fromisoformat(value),
    "date-time": lambda value: "T" in value and datetime.datetime.fromisoformat(value),
    "time": datetime.time.fromisoformat,
    "email": _is_email,
    "uri": lambda value: all(urlsplit(value)[:2]),  # a scheme and a host
    "uuid": uuid.UUID,
    "ipv4": ipaddress.IPv4Address,
    "ipv6": ipaddress.IPv6Address,
}


def _on_strings(check: Callable[[str], object]) -> Callable[[object], bool]:
    return lambda value: not isinstance(value, str) or bool(check(value))


#: The formats the generator makes, asserted rather than annotations: clients parse them (pydantic's ``date``,
#: ``UUID``, ``EmailStr``), so a 200 must hold one. Each check is linear, with no regex engine; a value that is not
#: a string passes (``type`` judges it). ``checkers`` maps a format to its check and the error that fails it.
_ASSERTED_FORMATS = jsonschema.FormatChecker(formats=())
_ASSERTED_FORMATS.checkers = {name: (_on_strings(check), ValueError) for name, check in _FORMAT_CHECKS.items()}


#: The :class:`Checker` at work (its budget, the strings drawn): jsonschema passes keyword functions nothing of ours.
_CHECKING: ContextVar[Checker] = ContextVar("evaljig_gateway_jsonschema_keywords")


class _UnknownMatchError(jsonschema.ValidationError):  # type: ignore[misc]
    """A string under a ``pattern`` that it was not drawn for: whether it matches is not known."""


class _UndecidedError(_UnknownMatchError):
    """``oneOf``/``not``/``if``/``contains`` whose verdict hangs on an unknown match: unknown in turn.

    Yielded, not raised, so an enclosing ``anyOf`` whose other branch passes still passes (the
    generator drew the value from that branch); :meth:`Checker.first_error` raises it as
    :class:`UncheckableError` only when the answer's verdict depends on it.
    """


def _pattern(validator: Validator, pattern: Any, instance: Any, schema: Any) -> Iterator[jsonschema.ValidationError]:
    if validator.is_type(instance, "string") and (pattern, instance) not in _CHECKING.get().drawn:
        yield _UnknownMatchError(
            f"{instance[:40]!r} was not drawn for the pattern {pattern!r}, so it is not known to match "
            "(the gateway runs no regex engine on values)"
        )


def _unique_items(validator: Validator, value: Any, instance: Any, schema: Any) -> Iterator[jsonschema.ValidationError]:
    if value is True and validator.is_type(instance, "array"):
        seen: set[bytes] = set()
        for item in instance:
            key = canonical(item)
            if key in seen:
                yield jsonschema.ValidationError(f"{shown(item)} appears twice, and uniqueItems is true")
                return
            seen.add(key)


def _beside_patterns(keyword: Callable[..., Any]) -> Callable[..., Any]:
    """``patternProperties`` and the keywords that search its patterns on every key: refused for an object with keys."""

    def checked(validator: Validator, value: Any, instance: Any, schema: Any) -> Any:
        patterned = isinstance(schema, Mapping) and schema.get("patternProperties")
        if patterned and validator.is_type(instance, "object") and instance:
            raise UncheckableError("patternProperties is not supported (its patterns would run on property names)")
        return keyword(validator, value, instance, schema)

    return checked


def _nested(error: Any) -> Iterator[Any]:
    """``error`` and the errors its context holds, depth first."""
    yield error
    for inner in error.context or ():
        yield from _nested(inner)


def _tainted(error: Any) -> bool:
    """Whether ``error`` may be due to a string not known to match a pattern (it or an error in its context)."""
    return any(isinstance(e, _UnknownMatchError) for e in _nested(error))


def _verdict(validator: Validator, schema: Any, instance: Any) -> bool | None:
    """True (an instance), False (a definite error), or None (only errors that may be unknown matches)."""
    errors = list(validator.evolve(schema=schema).iter_errors(instance))
    if not errors:
        return True
    return None if all(_tainted(e) for e in errors) else False


def _undecided(keyword: str, instance: Any) -> _UndecidedError:
    return _UndecidedError(
        f"whether {shown(instance)} satisfies {keyword} depends on a pattern the value was not drawn for "
        "(the gateway runs no regex engine on values): not supported"
    )


def _one_of(validator: Validator, branches: Any, instance: Any, schema: Any) -> Iterator[jsonschema.ValidationError]:
    verdicts = [_verdict(validator, branch, instance) for branch in branches]
    passed, unknown = verdicts.count(True), verdicts.count(None)
    if passed >= 2:
        yield jsonschema.ValidationError(f"{shown(instance)} is valid under more than one of the oneOf schemas")
    elif unknown:
        yield _undecided("oneOf", instance)
    elif not passed:
        yield jsonschema.ValidationError(f"{shown(instance)} is not valid under any of the oneOf schemas")


def _not(validator: Validator, negated: Any, instance: Any, schema: Any) -> Iterator[jsonschema.ValidationError]:
    verdict = _verdict(validator, negated, instance)
    if verdict is None:
        yield _undecided("not", instance)
    elif verdict:
        yield jsonschema.ValidationError(f"{shown(instance)} should not be valid under {shown(negated)}")


def _if(validator: Validator, condition: Any, instance: Any, schema: Any) -> Iterator[jsonschema.ValidationError]:
    verdict = _verdict(validator, condition, instance)
    branch = "then" if verdict else "else"
    if verdict is None:
        yield _undecided("if", instance)
    elif branch in schema:
        yield from validator.descend(instance, schema[branch], schema_path=branch)


def _contains(keyword: Callable[..., Any]) -> Callable[..., Any]:
    """2020-12 ``contains``: with ``maxContains`` a failing item can make the array pass, so unknowns must not count."""

    def contains(validator: Validator, value: Any, instance: Any, schema: Any) -> Any:
        capped = "maxContains" in schema and validator.is_type(instance, "array")
        if capped and any(_verdict(validator, value, item) is None for item in instance):
            return iter([_undecided("contains/maxContains", instance)])
        return keyword(validator, value, instance, schema)

    return contains


def _counted(name: str, keyword: Callable[..., Any]) -> Callable[..., Any]:
    steps = REF_STEPS if name in ("$ref", "$dynamicRef") else KEYWORD_STEPS

    def counted(validator: Validator, value: Any, instance: Any, schema: Any) -> Any:
        extra = len(value) if isinstance(value, (list, Mapping)) else 0
        _CHECKING.get().budget.spend_steps(steps + extra)
        return keyword(validator, value, instance, schema)

    return counted


#: Keywords re-implemented (where the draft has them), and those wrapped around ``jsonschema``'s own.
_REPLACED: dict[str, Callable[..., Any]] = {
    "pattern": _pattern,
    "patternProperties": _beside_patterns(lambda *_: ()),  # nothing to check once an object with keys is refused
    "uniqueItems": _unique_items,
    "oneOf": _one_of,
    "not": _not,
    "if": _if,
}
_WRAPPED: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    "additionalProperties": _beside_patterns,
    "unevaluatedProperties": _beside_patterns,
    "contains": _contains,
}
_EXTENDED: dict[type[Any], type[Any]] = {}


def _validator_class(schema: Any) -> type[Any]:
    """``jsonschema``'s validator class for the schema's draft, extended (made once per draft)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        except Exception:  # a "$schema" that is not a string: the default draft, as for an unknown one
            base = jsonschema.Draft202012Validator
    if base not in _EXTENDED:
        keywords = dict(base.VALIDATORS)
        keywords.update({name: keyword for name, keyword in _REPLACED.items() if name in keywords})
        keywords.update({name: wrap(keywords[name]) for name, wrap in _WRAPPED.items() if name in keywords})
        counted = {name: _counted(name, keyword) for name, keyword in keywords.items()}
        _EXTENDED[base] = jsonschema.validators.extend(base, counted)
    return _EXTENDED[base]


class Checker:
    """``jsonschema`` validation of values against ``root`` (and its subschemas, ``$ref`` resolved from the root)."""

    def __init__(self, root: Any, budget: OutputBudget, drawn: set[tuple[str, str]]) -> None:
        self._validator = _validator_class(root)(root, format_checker=_ASSERTED_FORMATS)
        self.budget = budget
        self.drawn = drawn

    def first_error(self, value: Any, schema: Any = None) -> tuple[str, tuple[Any, ...]] | None:
        """The first reason ``value`` is not an instance of ``schema`` (the root when None), or None.

        The reason is ``jsonschema``'s message and the schema path to the failing keyword.

        :class:`~evaljig_gateway._limits.BudgetExceededError` when checking costs more than is left;
        :class:`UncheckableError` when it would need a regex on the value or the schema breaks ``jsonschema``.
        """
        token = _CHECKING.set(self)
        try:
            validator = self._validator if schema is None else self._validator.evolve(schema=schema)
            error = next(iter(validator.iter_errors(value)), None)
        except (BudgetExceededError, UncheckableError):
            raise
        except RecursionError:
            raise UncheckableError("the schema nests too deeply to check the answer against it") from None
        except referencing.exceptions.Unresolvable as exc:
            raise UncheckableError(f"a $ref cannot be resolved: {exc}") from None
        except Exception as exc:  # a schema jsonschema itself chokes on (a string where a number belongs)
            raise UncheckableError(f"the schema cannot be checked: {type(exc).__name__}: {exc}") from None
        finally:
            _CHECKING.reset(token)
        if error is None:
            return None
        undecided = next((e for e in _nested(error) if isinstance(e, _UndecidedError)), None)
        if undecided is not None:  # the verdict hangs on an unknown match: the gateway cannot vouch either way
            raise UncheckableError(undecided.message)
        return error.message, tuple(error.absolute_schema_path)
