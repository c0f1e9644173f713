"""The transport behaviours: ``cut-<n>``, ``drop-<n>`` and ``garble-<n>``, applied to a reply's bytes.

A chunk is one server-sent event as the gateway sends it (one ``data:`` line, or ``event:`` +
``data:`` for the Responses API), the final ``data: [DONE]`` (or ``response.completed``) included.

* ``cut-<n>``: the first N chunks, then the body ends cleanly; the final chunk is never sent, so a
  client sees a stream that simply stops (the openai SDK returns what it got, without an error).
* ``drop-<n>``: the first N chunks, then the connection is closed without ending the chunked body:
  the client's HTTP library raises (httpx: ``RemoteProtocolError``, incomplete chunked read).
* ``garble-<n>``: chunk N (1-based) is ``data: {garbage``, not JSON; a stream shorter than N is unchanged.

A body that is not streamed is one JSON document, so N counts bytes: ``cut-<n>`` answers its first N
bytes (a matching ``content-length``: a clean, short, unparsable body), ``drop-<n>`` sends its first N
bytes chunked and closes the connection, ``garble-<n>`` sends its first N bytes followed by ``{garbage``.

``cut`` and ``drop`` replies are journaled with ``cut: true``: the client was not given a whole answer,
and the verdict finds a client that takes it as one.
"""

from __future__ import annotations

from dataclasses import replace

from evaljig_gateway._behaviours import Behaviour
from evaljig_gateway._replies import Reply

GARBAGE = b"{garbage"


def reshape(reply: Reply, behaviour: Behaviour) -> Reply:
    """``reply`` cut, dropped or garbled as ``behaviour`` says (unchanged when it says none of them)."""
    if reply.events is not None:
        return _stream(reply, behaviour)
    return _body(reply, behaviour)


def _stream(reply: Reply, behaviour: Behaviour) -> Reply:
    assert reply.events is not None
    events = list(reply.events)
    if behaviour.garble_at is not None and 1 <= behaviour.garble_at <= len(events):
        events[behaviour.garble_at - 1] = _garbled(events[behaviour.garble_at - 1])
    end = reply.end
    if behaviour.drop_after is not None:
        events, end = events[: behaviour.drop_after], "drop"
    if behaviour.cut_after is not None and end != "drop":
        events, end = events[: min(behaviour.cut_after, len(events) - 1)], "cut"
    return replace(reply, events=events, end=end)


def _garbled(event: bytes) -> bytes:
    """The event with its ``data:`` line replaced by ``data: {garbage`` (an ``event:`` line is kept)."""
    at = event.find(b"data: ")
    return event[: max(at, 0)] + b"data: " + GARBAGE + b"\n\n"


def _body(reply: Reply, behaviour: Behaviour) -> Reply:
    body, end = reply.body, reply.end
    if behaviour.garble_at is not None:
        body = body[: behaviour.garble_at] + GARBAGE  # a JSON object's prefix, or all of it and more: never JSON
    if behaviour.drop_after is not None:
        return replace(reply, body=b"", events=[body[: behaviour.drop_after]], end="drop")
    if behaviour.cut_after is not None and behaviour.cut_after < len(body):
        body, end = body[: behaviour.cut_after], "cut"
    return replace(reply, body=body, end=end)
