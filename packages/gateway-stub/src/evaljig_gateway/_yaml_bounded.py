"""YAML read from parser events, so the file cannot choose how deep, how big or how slow its loading is.

libyaml's composer (``CSafeLoader``) recurses once per nesting level in C: 80 KB of ``[``
overflows the stack and kills the process, pytest included. Its aliases let an 18 KB file
expand to a gigabyte. And building its node graph costs far more than parsing: 1.3 s for a
10 MB cassette against 0.2 s for the events alone. So a cassette is built here straight from
the parser's event stream (libyaml's when present; PyYAML's parser is iterative too): one
loop with an explicit stack, nesting bounded by :data:`MAX_DEPTH`, anchors and aliases
refused outright (evaljig's writer never emits them, vcrpy's neither), one document only,
and only the safe scalar types (``SafeConstructor``'s, ``!!binary`` included). Memory is
then proportional to the file, whose size the caller has already bounded.
"""

from __future__ import annotations

from typing import IO, Any

import yaml

#: Containers nested deeper than this are refused (a cassette needs 5; vcrpy's JSON-in-YAML none more).
MAX_DEPTH = 64

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MAP_TAGS = frozenset({None, "!", "tag:yaml.org,2002:map"})
_SEQ_TAGS = frozenset({None, "!", "tag:yaml.org,2002:seq"})
_NO_KEY = object()


class BoundedYAMLError(ValueError):
    """The document is refused; ``where`` is ``line L, column C`` (1-based) when known."""

    def __init__(self, reason: str, mark: Any = None) -> None:
        self.reason = reason
        self.where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        super().__init__(f"{self.where}: {reason}" if self.where else reason)


def load_bounded(stream: IO[bytes] | bytes) -> Any:
    """The single document in ``stream`` as Python values; raises :class:`BoundedYAMLError` for what is refused
    and ``yaml.YAMLError`` for what is not YAML."""
    loader = _Loader(stream)
    try:
        return _build(loader)
    finally:
        loader.dispose()


_QUOTED_OR_BLOCK = frozenset({"|", ">", '"', "'"})
#: Plain scalars (mapping keys, methods, codes) repeat in every interaction: their values are cached.
_PLAIN_CACHE_MAX, _PLAIN_CHARS_MAX = 4096, 64


def _build(loader: Any) -> Any:  # Any: libyaml's CParser and PyYAML's parser are not typed alike
    stack: list[list[Any]] = []  # [container, pending key] per open mapping or sequence
    root: Any = None
    documents = 0
    plain: dict[str, Any] = {}
    get_event = loader.get_event
    while True:
        event = get_event()
        kind = type(event)
        if kind is yaml.ScalarEvent:
            if event.anchor is not None:
                raise _alias(event)
            if event.tag is None and event.style in _QUOTED_OR_BLOCK:
                value = event.value  # quoted or block, untagged: a string, as the resolver would say
            elif event.tag is None and event.value in plain:
                value = plain[event.value]
            else:
                value = _scalar(loader, event)
                if event.tag is None and len(event.value) <= _PLAIN_CHARS_MAX and len(plain) < _PLAIN_CACHE_MAX:
                    plain[event.value] = value
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            value = stack.pop()[0]
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            mapping = kind is yaml.MappingStartEvent
            if event.anchor is not None:
                raise _alias(event)
            if event.tag not in (_MAP_TAGS if mapping else _SEQ_TAGS):
                raise BoundedYAMLError(f"the tag {event.tag!r} is not allowed in a cassette", event.start_mark)
            if len(stack) >= MAX_DEPTH:
                raise BoundedYAMLError(f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
            if stack and stack[-1][1] is _NO_KEY and isinstance(stack[-1][0], dict):
                raise BoundedYAMLError("a mapping key must be a scalar", event.start_mark)
            stack.append([{} if mapping else [], _NO_KEY])
            continue
        elif kind is yaml.AliasEvent:
            raise _alias(event)
        elif kind is yaml.StreamEndEvent:
            return root
        elif kind is yaml.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise BoundedYAMLError("more than one YAML document: a cassette is one document", event.start_mark)
            continue
        else:  # stream start, document end
            continue
        if not stack:
            root = value
            continue
        frame = stack[-1]
        container = frame[0]
        if type(container) is list:
            container.append(value)
        elif frame[1] is _NO_KEY:
            frame[1] = value
        else:
            container[frame[1]] = value
            frame[1] = _NO_KEY


def _alias(event: Any) -> BoundedYAMLError:
    return BoundedYAMLError(
        "anchors and aliases are not allowed in a cassette (they can expand without bound)", event.start_mark
    )


def _scalar(loader: Any, event: Any) -> Any:
    tag = event.tag
    if tag is None or tag == "!":
        tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
    construct = loader.yaml_constructors.get(tag)
    if construct is None or tag == "tag:yaml.org,2002:merge":
        raise BoundedYAMLError(f"the tag {tag!r} is not allowed in a cassette", event.start_mark)
    node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
    return construct(loader, node)
