"""One strict YAML reader for files people write, merge and review: case files, provider specs, cassettes.

YAML loaders accept more than such a file should mean, and some of it costs without bound:

- a key given twice in one mapping keeps the last value silently (a merge that kept both sides'
  lines): refused, naming the key;
- aliases are shared nodes, cheap to load but paid for by every reader after (validation, a
  rendered config, a comparison): 18 KB can stand for a gigabyte. A caller that has a use for
  them (case files share settings with ``&base`` and ``<<: *base``) gives a budget of nodes they
  may add once expanded; every other caller refuses them where they appear;
- nesting: libyaml's composer recurses once per level in C (80 KB of ``[`` kills the process)
  and PyYAML's in Python (a ``RecursionError``): bounded here, aliases' depth included;
- tags beyond the safe scalars (``!!python/...``, ``!!set``, ``!!omap``), and a second document.

So the document is built straight from the parser's event stream (libyaml's when present;
PyYAML's parser is iterative too) in one loop with an explicit stack: nothing recurses, memory
is proportional to the input (whose size the caller bounds) plus the alias budget, and it is
several times faster than composing a node graph first. Scalars mean what ``yaml.safe_load``
makes of them (the same resolver and constructors), merge keys (``<<``) what PyYAML makes of them.

Only ``evaljig_common/__init__`` names this module lazily: it needs PyYAML, and the noxfile imports
the package from nox's own venv, where nothing else is installed.
"""

from __future__ import annotations

from typing import IO, Any, Literal

import yaml

from evaljig_common._errors import EvaljigError

#: Container nesting a document may have by default (the top-level mapping or list is level 1).
MAX_YAML_DEPTH = 100

ProblemKind = Literal["syntax", "duplicate", "alias", "depth", "tag", "document", "key", "merge", "scalar"]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when there is one: ~10x faster
_MAP_TAGS = frozenset({None, "!", "tag:yaml.org,2002:map"})
_SEQ_TAGS = frozenset({None, "!", "tag:yaml.org,2002:seq"})
_MERGE_TAG = "tag:yaml.org,2002:merge"
#: The safe scalar types (``!!set``, ``!!omap`` and the rest are collections: a scalar with their tag is refused).
_SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("null", "bool", "int", "float", "binary", "timestamp", "str")
)
_QUOTED_OR_BLOCK = frozenset({"|", ">", '"', "'"})
#: Plain scalars (keys above all) repeat throughout a file: their values are cached, up to this many of this size.
_PLAIN_CACHE_MAX, _PLAIN_CHARS_MAX = 4096, 64
_NO_KEY = object()
_MERGE = object()
#: Key types that need no check beyond "not given before" (anything else goes the slow way: ``_unusual_key``).
_PLAIN_KEYS = frozenset({str, int, float, bool})


class StrictYAMLError(EvaljigError, ValueError):
    """A document :func:`loads_yaml_strict` refuses; ``str()`` is ``line L, column C: reason``.

    ``reason`` is the problem alone, ``line``/``column`` (1-based) where it is, ``kind`` which rule
    refused it and ``key`` the repeated key of a ``"duplicate"``, so a caller can name its file and
    add the fix that fits it.
    """

    def __init__(self, reason: str, mark: Any = None, *, kind: ProblemKind = "syntax", key: object = None) -> None:
        self.reason = reason
        self.line: int | None = mark.line + 1 if mark is not None else None
        self.column: int | None = mark.column + 1 if mark is not None else None
        self.kind: ProblemKind = kind
        self.key = key
        super().__init__(f"line {self.line}, column {self.column}: {reason}" if mark is not None else reason)

    @property
    def where(self) -> str:
        """`` at line L, column C`` when the place is known, else empty."""
        return f" at line {self.line}, column {self.column}" if self.line is not None else ""


def loads_yaml_strict(
    data: str | bytes | IO[bytes],
    *,
    max_depth: int = MAX_YAML_DEPTH,
    max_alias_nodes: int = 0,
    document: str = "this file",
) -> Any:
    """The single YAML document in ``data`` (text, UTF-8 bytes or a binary stream) as Python values (``None``
    for an empty one).

    Raises :class:`StrictYAMLError` for what is not YAML and for what is refused: a key repeated in
    one mapping, containers nested deeper than ``max_depth``, a second document, a tag that is not
    a safe scalar's (or a mapping's or list's), and an alias when ``max_alias_nodes`` is 0. With a
    budget, aliases (and the merge keys that use them) may add that many nodes once expanded; one
    that would pass it, refer to itself or nest past ``max_depth`` is refused. ``document`` names
    what is read in the reasons (``"a cassette"``, ``"a provider spec"``).
    """
    try:
        loader = _Loader(data)
    except UnicodeEncodeError as exc:  # text with a lone surrogate: no YAML parser reads it
        raise StrictYAMLError(
            f"a lone surrogate (U+{ord(exc.object[exc.start]):04X}) at character {exc.start}"
        ) from None
    try:
        return _Builder(loader, max_depth, max_alias_nodes, document).build()
    except yaml.MarkedYAMLError as exc:
        problem = " ".join(str(exc.problem or exc.context or "not valid YAML").split())
        raise StrictYAMLError(problem, exc.problem_mark or exc.context_mark) from None
    except yaml.YAMLError as exc:  # a reader error without a place: a bad byte, an unknown encoding
        raise StrictYAMLError(" ".join(str(exc).split())) from None
    finally:
        loader.dispose()


class _Frame:
    """An open mapping or list: what it holds so far and what the rules need to know about it."""

    __slots__ = ("anchor", "container", "expansion", "key", "mapping", "merges", "nodes", "reach")

    def __init__(self, mapping: bool, depth: int, anchor: str | None, nodes: int, expansion: int) -> None:
        self.mapping = mapping
        self.container: Any = {} if mapping else []
        self.key: Any = _NO_KEY
        self.merges: list[Any] | None = None  # the values of this mapping's ``<<`` keys, in order
        self.reach = depth  # the deepest nesting inside it, aliases expanded
        self.anchor = anchor
        self.nodes, self.expansion = nodes, expansion  # the counts when it opened: its size, if anchored


class _Builder:
    """One document's values, built from the parser's events with the rules of :func:`loads_yaml_strict`."""

    def __init__(self, loader: Any, max_depth: int, max_alias_nodes: int, document: str) -> None:
        self.loader = loader
        self.max_depth, self.budget, self.document = max_depth, max_alias_nodes, document
        self.anchors: dict[str, tuple[Any, int, int]] = {}  # name -> (value, nodes, levels) once closed
        self.open_anchors: set[str] = set()
        self.containers = 0  # mappings and lists read so far (the scalars are counted in ``build``)
        self.expansion = 0  # nodes aliases added so far
        self.stack: list[_Frame] = []

    def build(self) -> Any:
        """One loop over the events, the usual cases inline: the hot path of reading a 100 MB cassette."""
        stack, get_event = self.stack, self.loader.get_event
        plain: dict[str, Any] = {}
        root: Any = None
        documents = scalars = 0
        while True:
            event = get_event()
            kind = type(event)
            if kind is yaml.ScalarEvent:
                scalars += 1
                if event.tag is None and event.style in _QUOTED_OR_BLOCK:
                    value = event.value  # quoted or block, untagged: a string, as the resolver would say
                elif event.tag is None and event.value in plain:
                    value = plain[event.value]
                else:
                    value = self._scalar(event)
                    # plain, short and not ``<<`` (whether that may stand here depends on where it is): cached
                    short = event.tag is None and len(event.value) <= _PLAIN_CHARS_MAX and len(plain) < _PLAIN_CACHE_MAX
                    if short and value is not _MERGE:
                        plain[event.value] = value
                if event.anchor is not None:
                    self._anchor(event)
                    self.anchors[event.anchor] = (value, 1, 0)
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                value = self._close(stack.pop(), scalars)
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                self._open(event, kind is yaml.MappingStartEvent, scalars)
                continue
            elif kind is yaml.AliasEvent:
                value = self._alias(event)
            elif kind is yaml.StreamEndEvent:
                return root
            elif kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise StrictYAMLError(
                        f"more than one YAML document: {self.document} is one document", event.start_mark,
                        kind="document",
                    )  # fmt: skip
                continue
            else:  # stream start, document end
                continue
            if not stack:
                root = value
                continue
            frame = stack[-1]
            if not frame.mapping:
                frame.container.append(value)
            elif frame.key is _NO_KEY:
                if value is _MERGE or type(value) not in _PLAIN_KEYS or value in frame.container:
                    self._unusual_key(frame, value, event)
                frame.key = value
            elif frame.key is _MERGE:
                self._merge(frame, value, event)
            else:
                frame.container[frame.key] = value
                frame.key = _NO_KEY

    def _scalar(self, event: Any) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.loader.resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag == _MERGE_TAG:
            frame = self.stack[-1] if self.stack else None
            if frame is None or not frame.mapping or frame.key is not _NO_KEY:
                raise StrictYAMLError(
                    "a merge key '<<' is only allowed as a mapping's key", event.start_mark, kind="merge"
                )
            return _MERGE
        construct = self.loader.yaml_constructors.get(tag) if tag in _SCALAR_TAGS else None
        if construct is None:
            raise StrictYAMLError(f"the tag {tag!r} is not allowed in {self.document}", event.start_mark, kind="tag")
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        try:
            return construct(self.loader, node)
        except Exception as exc:  # PyYAML's constructors raise ValueError, KeyError, AttributeError ... on bad values
            shown = event.value if len(event.value) <= 40 else f"{event.value[:40]}..."
            why = f": {' '.join(str(exc).split())}" if isinstance(exc, ValueError) else ""
            reason = f"the value {shown!r} is not a valid {tag.rsplit(':', 1)[-1]}{why}"
            raise StrictYAMLError(reason, event.start_mark, kind="scalar") from None

    def _open(self, event: Any, mapping: bool, scalars: int) -> None:
        stack = self.stack
        if event.tag not in (_MAP_TAGS if mapping else _SEQ_TAGS):
            raise StrictYAMLError(
                f"the tag {event.tag!r} is not allowed in {self.document}", event.start_mark, kind="tag"
            )
        if len(stack) >= self.max_depth:
            raise StrictYAMLError(f"nested deeper than {self.max_depth} levels", event.start_mark, kind="depth")
        if stack and stack[-1].mapping and stack[-1].key is _NO_KEY:
            raise StrictYAMLError("a mapping key must be a scalar", event.start_mark, kind="key")
        if event.anchor is not None:
            self._anchor(event)
            self.open_anchors.add(event.anchor)
        self.containers += 1
        stack.append(_Frame(mapping, len(stack) + 1, event.anchor, scalars + self.containers, self.expansion))

    def _close(self, frame: _Frame, scalars: int) -> Any:
        value = frame.container
        if frame.merges:  # PyYAML's order: later ``<<`` keys over earlier ones, a list's first mapping over its
            merged: dict[Any, Any] = {}  # later ones, and the mapping's own keys over all of them
            for source in frame.merges:
                for mapping in reversed(source) if isinstance(source, list) else (source,):
                    merged.update(mapping)
            merged.update(value)
            value = merged
        if self.stack:
            self.stack[-1].reach = max(self.stack[-1].reach, frame.reach)
        if frame.anchor is not None:
            self.open_anchors.discard(frame.anchor)
            nodes = scalars + self.containers - frame.nodes + 1 + self.expansion - frame.expansion
            self.anchors[frame.anchor] = (value, nodes, frame.reach - len(self.stack))
        return value

    def _anchor(self, event: Any) -> None:
        if not self.budget:
            raise self._no_alias(event)
        name = event.anchor
        if name in self.anchors or name in self.open_anchors:  # PyYAML refuses it too: which one would *name be?
            raise StrictYAMLError(f"the anchor &{name} is defined twice", event.start_mark, kind="alias")

    def _no_alias(self, event: Any) -> StrictYAMLError:
        return StrictYAMLError(
            f"anchors and aliases are not allowed in {self.document} (&name, *name: they can expand without bound)",
            event.start_mark, kind="alias",
        )  # fmt: skip

    def _alias(self, event: Any) -> Any:
        if not self.budget:
            raise self._no_alias(event)
        name = event.anchor
        if name in self.open_anchors:
            raise StrictYAMLError(
                f"recursive alias: *{name} stands inside the node it names", event.start_mark, kind="alias"
            )
        if name not in self.anchors:
            raise StrictYAMLError(f"the alias *{name} has no anchor &{name} before it", event.start_mark, kind="alias")
        value, nodes, levels = self.anchors[name]
        self.expansion += nodes
        if self.expansion > self.budget:
            raise StrictYAMLError(
                f"aliases expand to more than {self.budget} extra nodes (refused: an alias bomb?)", event.start_mark,
                kind="alias",
            )  # fmt: skip
        depth = len(self.stack) + levels
        if depth > self.max_depth:
            raise StrictYAMLError(
                f"nested deeper than {self.max_depth} levels once aliases are expanded", event.start_mark, kind="depth"
            )
        if self.stack:
            self.stack[-1].reach = max(self.stack[-1].reach, depth)
        return value

    def _unusual_key(self, frame: _Frame, value: Any, event: Any) -> None:
        """Refuse a key that is repeated, or not a scalar (an alias of a mapping or list); ``<<`` passes."""
        if value is _MERGE:
            return
        if isinstance(value, dict | list):
            raise StrictYAMLError("a mapping key must be a scalar", event.start_mark, kind="key")
        if value in frame.container:
            raise StrictYAMLError(
                f"the key {value!r} is repeated in one mapping", event.start_mark, kind="duplicate", key=value
            )

    def _merge(self, frame: _Frame, value: Any, event: Any) -> None:
        if not (isinstance(value, dict) or (isinstance(value, list) and all(isinstance(v, dict) for v in value))):
            raise StrictYAMLError(
                "a merge key '<<' takes a mapping or a list of mappings", event.start_mark, kind="merge"
            )
        frame.merges = [*(frame.merges or ()), value]
        frame.key = _NO_KEY
