"""One generator of JSON values that satisfy a JSON Schema: structured output and tool arguments alike.

Clients send pydantic-made schemas (``$defs``/``$ref``, unions, enums, bounds, formats) and parse
the answer back into the model, so an answer that is not an instance breaks them. Values are a pure
function of the schema and ``seed`` (a seeded ``random.Random`` walks the schema in document
order), so the same request gets the same bytes.

Covered: local ``$ref`` (``#``, ``#/$defs/..``, ``#/definitions/..``, any JSON pointer) with recursion
bounded (after ``MAX_REF_REPEATS`` expansions of one reference on the current path the smallest
instance is chosen: the non-recursive ``anyOf`` branch, ``null``, no optional properties, the
fewest items); ``allOf`` (merged), ``anyOf``/``oneOf`` (one branch, non-null preferred), ``enum``,
``const``, ``type`` lists, ``properties``/``required``/``additionalProperties``/``min|maxProperties``,
``items``/``prefixItems``/tuple ``items``/``min|maxItems``/``uniqueItems``/``contains``, string
``min|maxLength``/``pattern``/``format`` (date, date-time, time, email, uri, uuid, hostname, ipv4,
ipv6), numeric ``minimum``/``maximum``/``exclusiveMinimum``/``exclusiveMaximum`` (draft-4 booleans
too)/``multipleOf``. Not followed: ``not``, ``if``/``then``/``else``, ``patternProperties``,
``propertyNames``, ``dependent*``, remote ``$ref``; ``oneOf`` branches that overlap may both match.
A schema that admits no value here raises :class:`SchemaInstanceError` naming the place.

Bounded by construction: every value, character and ``allOf`` member spends the request's
:class:`~evaljig_gateway._limits.OutputBudget` as it is made, and ``minLength``/``minItems``/
``minProperties`` beyond what is left are refused before anything is made. Sound by a final check:
the value is validated with ``jsonschema`` (the schema's own draft, 2020-12 by default; the
formats it generates asserted) before it is answered, so a value the walk got wrong (``not``,
``if``/``then``, conflicting ``allOf`` members it merged loosely) is a :class:`SchemaInstanceError` quoting
``jsonschema``'s reason, never a 200 with a non-instance. That check runs no regex engine on
generated text (a backtracking ``re.search`` there is what held the gateway): ``pattern`` is
trusted for strings this generator drew for that very pattern (they match by construction, see
``_regex_sample``) and any other string under a ``pattern`` (an ``enum`` member, a key under
``patternProperties``) makes the schema unsupported. Why not a non-backtracking engine: no
``google-re2`` wheel exists for every Python the gateway supports, and ``regress`` backtracks too.
Every keyword the check applies spends steps from the same budget.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import random
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import orjson

from evaljig_gateway import _content, _regex_sample
from evaljig_gateway._errors import invalid
from evaljig_gateway._limits import BudgetExceededError, OutputBudget

if TYPE_CHECKING:
    from evaljig_gateway._jsonschema_keywords import Checker

__all__ = ["MAX_REF_REPEATS", "SchemaInstanceError", "instance_for", "instance_json"]

#: Expansions of one ``$ref`` on the current path before the generator answers the smallest instance.
MAX_REF_REPEATS = 2
#: Steps of the request's budget one generated value costs (a step is a few microseconds of work).
VALUE_STEPS = 5
#: Nested ``$ref`` expansions after which a schema is judged to have no finite instance.
_MAX_REF_STACK = 32
#: Nesting of schemas walked (``$ref``/``allOf`` hops included): the walk and the final check recurse.
_MAX_DEPTH = 100
_WORDS = _content._VOCABULARY  # the words answers are made of, shared
_UNSET = object()
_TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")
_LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains")
_UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains")


class SchemaInstanceError(ValueError):
    """A schema this generator cannot answer; the message names the place in the schema.

    ``where`` is that place as a JSON pointer fragment (``#/properties/x/pattern``), ``reason`` why.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        where, _, reason = message.partition(": ")
        self.where, self.reason = (where, reason) if where.startswith("#") and reason else ("#", message)

    def param(self, prefix: str) -> str:
        """The place as a request parameter below ``prefix``: ``prefix.properties.x.pattern``."""
        parts = [p for p in self.where.lstrip("#").split("/") if p]
        return ".".join([prefix, *parts])


class UncheckableError(ValueError):
    """The value cannot be checked against the schema without running a regex on it (or the schema is broken)."""


def instance_for(schema: Mapping[str, Any] | bool, *, seed: str, budget: OutputBudget | None = None) -> Any:
    """A JSON value valid against ``schema``, the same for the same ``(schema, seed)``.

    ``seed`` should be derived from the request (e.g. its canonical prompt and choice index);
    ``budget`` is the request's (a fresh one at the default :class:`Limits` when not given).
    """
    budget = budget if budget is not None else OutputBudget.of()
    generator = _Generator(schema, seed, budget)
    try:
        value = generator.value(schema, "#", 0)
        error = generator.checker.first_error(value)  # the walk is done: where is back at "#"
    except (BudgetExceededError, UncheckableError) as exc:
        raise SchemaInstanceError(f"{generator.where}: {exc}") from None
    except RecursionError:  # the walk's (the check turns its own into UncheckableError)
        raise SchemaInstanceError(f"{generator.where}: nests too deeply to answer") from None
    if error is not None:
        message, path = error
        at = "".join(f"/{p}" for p in path)
        raise SchemaInstanceError(
            f"#{at}: the schema is unsatisfiable or uses keywords this gateway does not generate for: {message}"
        )
    return value


def instance_json(schema: Any, *, seed: str, budget: OutputBudget, param: str) -> str:
    """An instance of ``schema`` as JSON text; a 400 naming ``param`` and the place in the schema when there is none."""
    try:
        return orjson.dumps(instance_for(schema, seed=seed, budget=budget)).decode()
    except SchemaInstanceError as exc:
        raise invalid(exc.param(param), exc.reason) from None
    except TypeError as exc:  # a const/enum integer past 64 bits
        raise invalid(param, f"holds a value JSON output cannot carry: {exc}") from None


def seeded_rng(seed: str) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))


class _Generator:
    def __init__(self, root: Mapping[str, Any] | bool, seed: str, budget: OutputBudget) -> None:
        self._root = root
        self._rng = seeded_rng(seed)
        self._refs: list[str] = []
        self._budget = budget
        self.where = "#"
        """The place being generated: where a budget ran out."""
        self.drawn: set[tuple[str, str]] = set()
        """``(pattern, string)`` for every string drawn for a pattern: they match by construction."""
        self._patterns: dict[str, Any] = {}

    @functools.cached_property
    def checker(self) -> Checker:
        """``jsonschema``'s validator of the root, bounded and regex-free, made (and imported) when first needed."""
        from evaljig_gateway._jsonschema_keywords import Checker

        return Checker(self._root, self._budget, self.drawn)

    def _fits(self, value: Any, schema: Mapping[str, Any]) -> bool:
        """Whether ``value`` is an instance of ``schema`` (a subschema; ``$ref`` resolved from the root)."""
        self._budget.spend_steps(VALUE_STEPS)  # a validator set up and run, whatever the schema
        return self.checker.first_error(value, dict(schema)) is None

    def _refuse_beyond_budget(self, chars: int, where: str, what: str, left: str = "characters left") -> None:
        """Refuse a ``min*`` needing at least ``chars`` characters, more than are left, before anything is made."""
        if chars > self._budget.chars_left:
            raise SchemaInstanceError(
                f"{where}: {what} more than the {self._budget.chars_left:,} {left} of the {self._budget.max_chars:,} "
                "this gateway generates per request (evaljig-gateway serve --max-generated-chars)"
            )

    def _const(self, schema: Mapping[str, Any], where: str) -> Any:
        value = schema["const"]
        rest = _beside(schema, "const")
        if rest and not self._fits(value, rest):
            raise SchemaInstanceError(f"{where}/const: {shown(value)} does not satisfy the keywords beside it")
        return value

    # ------------------------------------------------------------------ dispatch

    def value(self, schema: Any, where: str, depth: int) -> Any:
        self.where = where
        self._budget.spend_steps(VALUE_STEPS)
        value = self._value(schema, where, depth)
        self.where = where
        self._budget.spend_chars(_size(value))
        return value

    def _value(self, schema: Any, where: str, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise SchemaInstanceError(f"{where}: nests deeper than {_MAX_DEPTH} levels")
        if schema is True:
            return self._word()
        if schema is False:
            raise SchemaInstanceError(f"{where}: the schema 'false' admits no value")
        if not isinstance(schema, Mapping):
            raise SchemaInstanceError(f"{where}: a schema must be an object or a boolean")
        if "$ref" in schema:
            return self._ref(schema, where, depth)
        if "allOf" in schema:
            return self.value(self._merged(schema, where), where, depth + 1)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self._branch(schema, key, where, depth)
        if "const" in schema:
            return self._const(schema, where)
        if "enum" in schema:
            return self._enum(schema, where)
        kind = self._kind(schema, where)
        if kind == "object":
            return self._object(schema, where, depth)
        if kind == "array":
            return self._array(schema, where, depth)
        if kind == "string":
            return self._string(schema, where)
        if kind in ("integer", "number"):
            return self._number(schema, kind, where)
        if kind == "boolean":
            return self._rng.random() < 0.5
        return None

    @property
    def _minimal(self) -> bool:
        """True once some reference on the current path has been expanded ``MAX_REF_REPEATS`` times."""
        return any(self._refs.count(ref) >= MAX_REF_REPEATS for ref in set(self._refs))

    # ------------------------------------------------------------------ references and combinators

    def _resolve(self, ref: Any, where: str) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise SchemaInstanceError(f"{where}/$ref: only local references ('#...') are followed, got {ref!r}")
        node: Any = self._root
        self._budget.spend_steps(1 + ref.count("/"))
        for raw in (p for p in ref[1:].split("/") if p):
            part = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise SchemaInstanceError(f"{where}/$ref: {ref!r} does not resolve")
        return node

    def _ref(self, schema: Mapping[str, Any], where: str, depth: int) -> Any:
        ref = schema["$ref"]
        if len(self._refs) >= _MAX_REF_STACK:
            raise SchemaInstanceError(f"{where}/$ref: {ref!r} recurses without a finite instance")
        target = self._resolve(ref, where)
        rest = _beside(schema, "$ref")
        self._refs.append(str(ref))
        value = self.value({"allOf": [target, rest]} if rest else target, f"{where}/$ref", depth + 1)
        self._refs.pop()  # no finally: whatever the walk raises ends it (instance_for catches nothing to go on)
        return value

    def _merged(self, schema: Mapping[str, Any], where: str) -> dict[str, Any]:
        """``allOf`` folded into one schema: properties merged, bounds tightened, types intersected."""
        out: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        pending = list(schema["allOf"]) if isinstance(schema["allOf"], list) else []
        closed: list[set[str]] = [set(out.get("properties") or {})] if out.get("additionalProperties") is False else []
        steps = 0
        while pending:
            steps += 1
            if steps > 4096:
                raise SchemaInstanceError(f"{where}/allOf: more than 4,096 members to merge (or it references itself)")
            member = pending.pop(0)
            if member is True:
                continue
            if not isinstance(member, Mapping):
                raise SchemaInstanceError(f"{where}/allOf: members must be schemas (objects or true)")
            if "$ref" in member:
                target = self._resolve(member["$ref"], f"{where}/allOf")
                pending[:0] = [target, {k: v for k, v in member.items() if k != "$ref"}]
                continue
            if isinstance(member.get("allOf"), list):
                pending[:0] = member["allOf"]
                member = {k: v for k, v in member.items() if k != "allOf"}
            if member.get("additionalProperties") is False:
                closed.append(set(member.get("properties") or {}))
            self._budget.spend_steps(1 + sum(len(v) if isinstance(v, (list, Mapping)) else 1 for v in member.values()))
            _merge_into(out, member, where)
        if closed:
            allowed = set.intersection(*closed)
            out["properties"] = {k: v for k, v in (out.get("properties") or {}).items() if k in allowed}
            out["additionalProperties"] = False
        if isinstance(out.get("type"), list) and not out["type"]:
            raise SchemaInstanceError(f"{where}/allOf: the members' types have nothing in common")
        return out

    def _branch(self, schema: Mapping[str, Any], key: str, where: str, depth: int) -> Any:
        branches = schema[key]
        if not isinstance(branches, list) or not branches:
            raise SchemaInstanceError(f"{where}/{key}: must be a non-empty array of schemas")
        if self._minimal:
            index = min(range(len(branches)), key=lambda i: (_cost(branches[i], 0, self._budget), i))
        else:
            useful = [i for i, b in enumerate(branches) if not _is_null(b)] or list(range(len(branches)))
            index = self._rng.choice(useful)
        rest = {k: v for k, v in schema.items() if k != key}
        chosen = branches[index]
        merged = {"allOf": [rest, chosen]} if any(k not in _ANNOTATIONS for k in rest) else chosen
        return self.value(merged, f"{where}/{key}/{index}", depth + 1)

    def _enum(self, schema: Mapping[str, Any], where: str) -> Any:
        options = schema["enum"]
        if not isinstance(options, list) or not options:
            raise SchemaInstanceError(f"{where}/enum: must be a non-empty array")
        self._budget.spend_steps(len(options))
        kinds = schema.get("type")
        if kinds is not None:
            wanted = set(kinds) if isinstance(kinds, list) else {kinds}
            integers = "number" in wanted  # an integer is a number too
            options = [o for o in options if _json_type(o) in wanted or (integers and _json_type(o) == "integer")]
            if not options:
                raise SchemaInstanceError(f"{where}/enum: no value is of type {kinds!r}")
        rest = _beside(schema, "enum", "type")
        if rest:  # minimum, maxLength, pattern... beside the enum: only members that satisfy them will do
            options = [o for o in options if self._fits(o, rest)]
            if not options:
                raise SchemaInstanceError(f"{where}/enum: no member satisfies the keywords beside it")
        return self._rng.choice(options)

    def _kind(self, schema: Mapping[str, Any], where: str) -> str:
        kind = schema.get("type")
        if isinstance(kind, list):
            kinds = [str(k) for k in kind if k in _TYPES]
            if not kinds:
                raise SchemaInstanceError(f"{where}/type: names no JSON type")
            if self._minimal:
                return min(kinds, key=lambda k: (k in ("object", "array"), k != "null"))
            return self._rng.choice([k for k in kinds if k != "null"] or kinds)
        if isinstance(kind, str):
            if kind not in _TYPES:
                raise SchemaInstanceError(f"{where}/type: {kind!r} is not a JSON type")
            return kind
        if self._minimal and schema.get("nullable") is True:
            return "null"
        return _implied_kind(schema)

    # ------------------------------------------------------------------ containers

    def _object(self, schema: Mapping[str, Any], where: str, depth: int) -> dict[str, Any]:
        props = schema.get("properties") or {}
        if not isinstance(props, Mapping):
            raise SchemaInstanceError(f"{where}/properties: must be an object mapping names to schemas")
        raw_required = schema.get("required") or []
        self._budget.spend_steps(len(props) + (len(raw_required) if isinstance(raw_required, list) else 0))
        required = list(dict.fromkeys(r for r in raw_required if isinstance(r, str)))
        wanted = set(required)
        extra = schema.get("additionalProperties", True)
        names = [n for n in props if n in wanted] if self._minimal else list(props)
        names = list(dict.fromkeys([*names, *required]))
        most = schema.get("maxProperties")
        if isinstance(most, int) and len(names) > most:
            names = sorted(names, key=lambda n: n not in wanted)[: max(most, len(wanted))]  # the required first
        least = _int_bound(schema.get("minProperties"), 0)
        # '"k":0,' is 4 characters at the least
        self._refuse_beyond_budget(least * 4, f"{where}/minProperties", f"{least:,} properties need")
        names = list(dict.fromkeys([*names, *props]))[: max(least, len(names))]  # the declared ones first
        taken = set(names)
        counters = itertools.count(1)
        while len(names) < least:
            self._budget.spend_steps(1)
            if extra is False:
                raise SchemaInstanceError(f"{where}/minProperties: more than the declared properties")
            name = f"extra_{next(counters)}"
            if name not in taken:  # a declared or required name; those made here differ by their counter
                names.append(name)
        out: dict[str, Any] = {}
        for name in names:
            if name in props:
                out[name] = self.value(props[name], f"{where}/properties/{name}", depth + 1)
            elif extra is False:
                raise SchemaInstanceError(f"{where}/required: {name!r} is not among the allowed properties")
            else:
                out[name] = self.value(extra, f"{where}/additionalProperties", depth + 1)
        return out

    def _array(self, schema: Mapping[str, Any], where: str, depth: int) -> list[Any]:
        prefix = schema.get("prefixItems")
        items: Any = schema.get("items", True)
        if isinstance(items, list):  # draft 4-7 tuple form
            prefix, items = items, schema.get("additionalItems", True)
        prefix = prefix if isinstance(prefix, list) else []
        least = _int_bound(schema.get("minItems"), 0)
        most = schema.get("maxItems") if isinstance(schema.get("maxItems"), int) else None
        contains = schema.get("contains")
        if contains is not None:
            least = max(least, len(prefix) + _int_bound(schema.get("minContains"), 1))
        count = least if self._minimal else max(least, len(prefix) or 1)
        if items is False:
            count = min(count, len(prefix))
        if most is not None:
            count = min(count, most)
        if count < least:
            raise SchemaInstanceError(f"{where}: minItems {least} cannot be met within maxItems/items")
        # an item and its comma are 2 characters at the least
        self._refuse_beyond_budget(count * 2, f"{where}/minItems", f"{count:,} items need")
        unique = schema.get("uniqueItems") is True
        seen: set[bytes] = set()
        out: list[Any] = []
        for i in range(count):
            sub: Any = prefix[i] if i < len(prefix) else items
            if contains is not None and i >= len(prefix):
                sub = {"allOf": [sub, contains]} if sub is not True else contains
            for _attempt in range(16):
                item = self.value(sub, f"{where}/{'prefixItems' if i < len(prefix) else 'items'}/{i}", depth + 1)
                key = canonical(item)
                if not unique or key not in seen:
                    break
            else:
                raise SchemaInstanceError(f"{where}/uniqueItems: cannot find {count} different items")
            seen.add(key)
            out.append(item)
        return out

    # ------------------------------------------------------------------ scalars

    def _word(self) -> str:
        return self._rng.choice(_WORDS)

    def _string(self, schema: Mapping[str, Any], where: str) -> str:
        least = _int_bound(schema.get("minLength"), 0)
        most = schema.get("maxLength") if isinstance(schema.get("maxLength"), int) else None
        if most is not None and most < least:
            raise SchemaInstanceError(f"{where}: maxLength {most} is below minLength {least}")
        self._refuse_beyond_budget(least, f"{where}/minLength", f"{least:,} characters is", left="left")
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            try:
                found = _regex_sample.sample(pattern, self._rng, self._budget, least, most, self._patterns)
            except (_regex_sample.RegexError, BudgetExceededError) as exc:
                raise SchemaInstanceError(f"{where}/pattern: {exc}") from None
            self.drawn.add((pattern, found))
            return found
        fmt = schema.get("format")
        if isinstance(fmt, str) and fmt in _FORMATS:
            text = str(_FORMATS[fmt](self._rng))
            if len(text) >= least and (most is None or len(text) <= most):
                return text
        words = [self._word()]
        length = len(words[0])
        while length < least:
            self._budget.spend_steps(1)
            words.append(self._word())
            length += len(words[-1]) + 1
        return " ".join(words)[:most]

    def _number(self, schema: Mapping[str, Any], kind: str, where: str) -> int | float:
        low, low_open = _bound(schema, "minimum", "exclusiveMinimum")
        high, high_open = _bound(schema, "maximum", "exclusiveMaximum")
        if low is None:
            low = 0.0 if high is None else high - 100.0
        if high is None:
            high = low + 100.0
        step = schema.get("multipleOf")
        if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0:
            return self._multiple(step, kind, low, low_open, high, high_open, where)
        if kind == "integer":
            first = math.floor(low) + 1 if low_open and float(low).is_integer() else math.ceil(low)
            last = math.ceil(high) - 1 if high_open and float(high).is_integer() else math.floor(high)
            if first > last:
                raise SchemaInstanceError(f"{where}: no integer between the bounds")
            return self._rng.randint(first, min(last, first + 1000))
        span = min(high - low, 1000.0)
        for _ in range(8):
            value = round(low + span * self._rng.random(), 2)
            if _within(value, low, low_open, high, high_open):
                return value
        middle = low + (high - low) / 2
        if _within(middle, low, low_open, high, high_open):
            return middle
        if not low_open and low <= high:
            return low
        raise SchemaInstanceError(f"{where}: no number between the bounds")

    def _multiple(
        self, step: int | float, kind: str, low: float, low_open: bool, high: float, high_open: bool, where: str
    ) -> int | float:
        if _within(0, low, low_open, high, high_open):
            return 0  # a multiple of every step
        first_f, last_f = low / step, high / step
        if not (math.isfinite(first_f) and math.isfinite(last_f)):
            raise SchemaInstanceError(f"{where}/multipleOf: {step} is too small for a multiple between the bounds")
        first, last = math.ceil(first_f), math.floor(last_f)
        candidates = list(range(first, min(last, first + 1000) + 1))
        self._rng.shuffle(candidates)
        for k in candidates[:64]:
            value: int | float = k * step  # an int for an int step, else a float
            if kind == "integer" or isinstance(step, int):
                if not float(value).is_integer():
                    continue
                value = int(value)
            if _within(value, low, low_open, high, high_open) and _exact_multiple(value, step):
                return value
        raise SchemaInstanceError(f"{where}/multipleOf: no multiple of {step} between the bounds")


# ---------------------------------------------------------------------- helpers


#: Keywords that do not change which values are valid.
_ANNOTATIONS = ("title", "description", "default", "examples", "$comment", "$schema", "$id", "deprecated")


def _beside(schema: Mapping[str, Any], *taken: str) -> dict[str, Any]:
    """The keywords of ``schema`` but ``taken`` that constrain its values (not annotations, nor ``$defs``)."""
    return {k: v for k, v in schema.items() if k not in taken and k not in _ANNOTATIONS and k not in _DEFINITIONS}


def _merge_into(out: dict[str, Any], member: Mapping[str, Any], where: str) -> None:
    """One ``allOf`` member folded into ``out`` (``_merged`` applies ``additionalProperties: false`` at the end)."""
    for key, value in member.items():
        if key == "const" and key in out and canonical(out[key]) != canonical(value):
            raise SchemaInstanceError(
                f"{where}/allOf: its members ask for different constants, {shown(out[key])} and {shown(value)}"
            )
        if key not in out:
            out[key] = dict(value) if key == "properties" and isinstance(value, Mapping) else value
        elif key == "properties" and isinstance(value, Mapping) and isinstance(out[key], Mapping):
            props = dict(out[key])
            for name, sub in value.items():
                props[name] = {"allOf": [props[name], sub]} if name in props else sub
            out[key] = props
        elif key == "required" and isinstance(value, list) and isinstance(out[key], list):
            out[key] = list(dict.fromkeys([*out[key], *value]))
        elif key == "type":
            ours = out[key] if isinstance(out[key], list) else [out[key]]
            theirs = value if isinstance(value, list) else [value]
            both = [k for k in ours if k in theirs or (k == "integer" and "number" in theirs)]
            both += [k for k in theirs if k == "integer" and "number" in ours and k not in both]
            out[key] = both[0] if len(both) == 1 else both
        elif key in _LOWER_BOUNDS and _is_number(value) and _is_number(out[key]):
            out[key] = max(out[key], value)
        elif key in _UPPER_BOUNDS and _is_number(value) and _is_number(out[key]):
            out[key] = min(out[key], value)
        elif key == "enum" and isinstance(value, list) and isinstance(out[key], list):
            theirs_keys = {canonical(v) for v in value}
            out[key] = [v for v in out[key] if canonical(v) in theirs_keys]
            if not out[key]:
                raise SchemaInstanceError(f"{where}/allOf: its members' enums have no value in common")
        elif key in ("anyOf", "oneOf"):
            out.setdefault("allOf", []).append({key: value})


#: Where subschemas are kept for ``$ref``: no constraint on the value beside them.
_DEFINITIONS = ("$defs", "definitions")


def canonical(value: Any) -> bytes:
    """A key equal for values JSON Schema calls equal (``1`` and ``1.0``; ``true`` is not ``1``; key order ignored)."""
    try:
        return orjson.dumps(_normal(value), option=orjson.OPT_SORT_KEYS)
    except TypeError:  # an integer past 64 bits from a schema's const/enum
        return repr(_normal(value)).encode()


def _normal(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    return value


def shown(value: Any) -> str:
    """``value`` for an error message, cut to 40 characters (Python's repr, as ``jsonschema``'s messages have it)."""
    try:
        text = repr(value)
    except ValueError:  # an integer of thousands of digits
        return "a very large number"
    return text if len(text) <= 40 else text[:37] + "..."


def _size(value: Any) -> int:
    """Characters ``value`` adds to the JSON answer, its children not counted (they are spent as they are made)."""
    if isinstance(value, str):
        return len(value) + 3
    if isinstance(value, dict):
        return 2 + sum(len(k) + 4 for k in value)
    if isinstance(value, list):
        return 2 + len(value)
    if isinstance(value, bool) or value is None:
        return 5
    return len(str(value)) if isinstance(value, int) and abs(value) < 10**30 else 24


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_null(schema: Any) -> bool:
    return isinstance(schema, Mapping) and (schema.get("type") == "null" or schema.get("const", _UNSET) is None)


def _cost(schema: Any, depth: int, budget: OutputBudget) -> int:
    """How big the smallest instance of ``schema`` is, roughly; a reference costs most (it may recurse)."""
    budget.spend_steps(1)  # branches of branches: without it, 8 levels of 100 branches would never end
    if depth > 8 or (isinstance(schema, Mapping) and "$ref" in schema):
        return 100
    if not isinstance(schema, Mapping):
        return 1
    if _is_null(schema):
        return 0
    if "const" in schema or "enum" in schema:
        return 1
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return min(_cost(b, depth + 1, budget) for b in schema[key])
    if isinstance(schema.get("allOf"), list):
        return sum(_cost(b, depth + 1, budget) for b in schema["allOf"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return 0 if "null" in kind else 1
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        required = schema.get("required") or []
        return 1 + sum(_cost(props.get(r, True), depth + 1, budget) for r in required if isinstance(r, str))
    if kind == "array" or "items" in schema:
        return 1 + _int_bound(schema.get("minItems"), 0) * _cost(schema.get("items", True), depth + 1, budget)
    return 1


def _implied_kind(schema: Mapping[str, Any]) -> str:
    """The type a schema without ``type`` most plausibly wants, from its keywords."""
    if any(k in schema for k in ("properties", "required", "additionalProperties", "minProperties")):
        return "object"
    if any(k in schema for k in ("items", "prefixItems", "minItems", "maxItems", "contains", "uniqueItems")):
        return "array"
    if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")):
        return "number"
    return "string"


#: JSON types of Python values that are not null: the first of these a value is an instance of, else object.
_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"))


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, float) and value.is_integer():
        return "integer"
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "object")


def _int_bound(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _bound(schema: Mapping[str, Any], inclusive: str, exclusive: str) -> tuple[float | None, bool]:
    """The tighter of ``minimum``/``exclusiveMinimum`` (or the maxima), and whether it is open."""
    plain = schema.get(inclusive)
    plain = plain if _is_number(plain) else None
    open_ = schema.get(exclusive)
    if open_ is True and plain is not None:  # draft 4: a boolean that makes ``minimum`` exclusive
        return plain, True
    if not _is_number(open_):
        return plain, False
    if plain is None or (open_ >= plain if inclusive == "minimum" else open_ <= plain):
        return open_, True
    return plain, False


def _within(value: float, low: float, low_open: bool, high: float, high_open: bool) -> bool:
    above = value > low if low_open else value >= low
    below = value < high if high_open else value <= high
    return above and below


def _exact_multiple(value: int | float, step: int | float) -> bool:
    """``multipleOf`` as validators judge it (``value / step`` is a whole number in floating point)."""
    if isinstance(step, int) and isinstance(value, int):
        return value % step == 0
    return float(value / step).is_integer()


def _date(rng: random.Random) -> str:
    return f"20{rng.randint(10, 29)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _time(rng: random.Random) -> str:
    return f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"


_FORMATS: dict[str, Any] = {
    "date": _date,
    "time": _time,
    "date-time": lambda rng: f"{_date(rng)}T{_time(rng)}",
    "email": lambda rng: f"{_WORDS[rng.randrange(26)]}.{_WORDS[rng.randrange(26)]}@example.com",
    "idn-email": lambda rng: f"{_WORDS[rng.randrange(26)]}@example.com",
    "uri": lambda rng: f"https://example.com/{_WORDS[rng.randrange(26)]}",
    "iri": lambda rng: f"https://example.com/{_WORDS[rng.randrange(26)]}",
    "uri-reference": lambda rng: f"/{_WORDS[rng.randrange(26)]}",
    "uuid": lambda rng: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
    "hostname": lambda rng: f"{_WORDS[rng.randrange(26)]}.example.com",
    "ipv4": lambda rng: f"192.0.2.{rng.randint(1, 254)}",
    "ipv6": lambda rng: f"2001:db8::{rng.randint(1, 0xFFFF):x}",
    "duration": lambda rng: f"P{rng.randint(1, 30)}D",
}
