"""A cassette's change, per exchange: which requests are new or gone, and which answers changed.

A cassette (vcrpy's layout, which the gateway's recorder writes: ``interactions`` of
``request``/``response``) is compared as a list of exchanges matched by request — method, path
and the parsed JSON body — not by position: a re-record that adds one request in the middle
says one new request, not a shifted list. The k-th occurrence of a request matches the k-th on
the other side (a retried request is recorded as often as it was sent). For an answer that
changed, the response's status and parsed body are diffed by key path.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any
from urllib.parse import urlsplit

from evaljig_review._semantic import (
    FORMAT,
    REORDERED,
    VALUE,
    Change,
    Comparison,
    Exchange,
    diff_values,
    value_of,
)

SIDECAR_SUFFIX = ".recorded-for.json"
MAX_EXCHANGES = 100


def is_cassette_value(value: Any) -> bool:
    """vcrpy's layout: a mapping with an ``interactions`` list of request/response mappings."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("interactions"), list)
        and all(isinstance(i, dict) and "request" in i for i in value["interactions"])
    )


def cassette_of(path: str) -> str:
    """``cassettes/a.recorded-for.json`` -> ``cassettes/a.yaml``; a cassette is its own."""
    if path.endswith(SIDECAR_SUFFIX):
        return path[: -len(SIDECAR_SUFFIX)] + ".yaml"
    return path


def sidecar_of(path: str) -> str:
    """``cassettes/a.yaml`` -> ``cassettes/a.recorded-for.json``."""
    return path.rsplit(".", 1)[0] + SIDECAR_SUFFIX


def _body(value: Any) -> Any:
    if isinstance(value, dict) and "string" in value:
        value = value["string"]
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _request(interaction: dict[str, Any]) -> tuple[str, str]:
    """(match key, short label) of one interaction's request."""
    request = interaction.get("request") or {}
    method = str(request.get("method", "?"))
    path = urlsplit(str(request.get("uri", ""))).path or "/"
    body = _body(request.get("body"))
    key = f"{method} {path} {json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)}"
    return key, f"{method} {path}{_gist(body)}"


def _gist(body: Any) -> str:
    """What tells one request from another at a glance: the last message, the prompt, the model."""
    if not isinstance(body, dict):
        return ""
    text: Any = None
    messages = body.get("messages")
    if isinstance(messages, list) and messages and isinstance(messages[-1], dict):
        text = messages[-1].get("content")
    if text is None:
        text = body.get("prompt", body.get("input"))
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False) if text is not None else ""
    text = " ".join(text.split())
    text = text if len(text) <= 60 else text[:57] + "…"
    model = body.get("model")
    return f" [{model}] {json.dumps(text, ensure_ascii=False)}" if model else f" {json.dumps(text, ensure_ascii=False)}"


def _response(interaction: dict[str, Any]) -> Any:
    response = interaction.get("response") or {}
    status = response.get("status") or {}
    return {"status": status.get("code") if isinstance(status, dict) else status, "body": _body(response.get("body"))}


def _by_request(interactions: list[Any]) -> dict[str, list[tuple[int, str, Any]]]:
    found: dict[str, list[tuple[int, str, Any]]] = defaultdict(list)
    for index, interaction in enumerate(interactions):
        if isinstance(interaction, dict):
            key, label = _request(interaction)
            found[key].append((index, label, _response(interaction)))
    return found


#: More answers than this changed the same way are said once (a gateway change re-records them all alike).
SAME_CHANGE_MIN = 3


def _same_changes_once(answers: list[Exchange]) -> list[Exchange]:
    """Answers whose changes are identical (but for their index) as one exchange naming how many."""

    def signature(exchange: Exchange) -> tuple[tuple[str, str | None, str | None], ...]:
        return tuple((c.path.split("]", 1)[-1], c.old, c.new) for c in exchange.changes)

    groups: dict[tuple[tuple[str, str | None, str | None], ...], list[Exchange]] = defaultdict(list)
    for exchange in answers:
        groups[signature(exchange)].append(exchange)
    merged: list[Exchange] = []
    for exchange in answers:
        group = groups[signature(exchange)]
        if len(group) <= SAME_CHANGE_MIN:
            merged.append(exchange)
        elif group[0] is exchange:
            where = ", ".join(e.request.split(" ", 1)[0] for e in group[:5]) + (", …" if len(group) > 5 else "")
            changes = [Change(f"interactions[*]{path}", old, new) for path, old, new in signature(exchange)]
            merged.append(Exchange("answers-changed", f"{len(group)} answers changed the same way ({where})", changes))
    return merged


def compare_cassettes(old: Any, new: Any, compared: Comparison) -> Comparison:
    """Refine a value-changed comparison of two cassettes into per-exchange changes."""
    if compared.category in (FORMAT, REORDERED) or not (is_cassette_value(old) and is_cassette_value(new)):
        return compared
    before, after = _by_request(old["interactions"]), _by_request(new["interactions"])
    exchanges: list[Exchange] = []
    for key in dict.fromkeys([*after, *before]):
        olds, news = before.get(key, []), after.get(key, [])
        for k in range(max(len(olds), len(news))):
            if k >= len(olds):
                index, label, _ = news[k]
                exchanges.append(Exchange("new", f"interactions[{index}] {label}"))
            elif k >= len(news):
                index, label, _ = olds[k]
                exchanges.append(Exchange("removed", f"interactions[{index}] (base) {label}"))
            else:
                (_, _, was), (index, label, now) = olds[k], news[k]
                changes = list(diff_values(was, now, f"interactions[{index}].response"))
                if changes:
                    exchanges.append(Exchange("answer-changed", f"interactions[{index}] {label}", changes[:20]))
    changed = sum(1 for e in exchanges if e.status == "answer-changed")
    answers = _same_changes_once([e for e in exchanges if e.status == "answer-changed"])
    exchanges = answers + [e for e in exchanges if e.status == "new"] + [e for e in exchanges if e.status == "removed"]
    other: list[Change] = []
    rest_old = {k: v for k, v in old.items() if k != "interactions"}
    rest_new = {k: v for k, v in new.items() if k != "interactions"}
    other = list(diff_values(rest_old, rest_new))
    if not exchanges and not other:
        return Comparison(REORDERED, note="the same exchanges in another order")
    return Comparison(
        VALUE,
        other,
        exchanges[:MAX_EXCHANGES],
        omitted=max(0, len(exchanges) - MAX_EXCHANGES),
        note=f"{sum(1 for e in exchanges if e.status == 'new')} new, "
        f"{sum(1 for e in exchanges if e.status == 'removed')} removed, "
        f"{changed} answers changed "
        f"({len(new['interactions'])} exchanges, {len(old['interactions'])} in the base)",
    )


def cassette_comparison(old: bytes | None, new: bytes | None, compared: Comparison, suffix: str) -> Comparison:
    """``compare_cassettes`` over the raw bytes (a side that does not parse leaves ``compared`` as it is)."""
    if old is None or new is None or compared.category != VALUE:
        return compared
    return compare_cassettes(value_of(old, suffix), value_of(new, suffix), compared)
