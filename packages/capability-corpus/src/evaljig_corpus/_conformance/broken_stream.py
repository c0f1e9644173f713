"""Streams that break on the way (``broken_stream``): cut before their end, a closed connection, a chunk not JSON.

A client that joins the deltas it got and calls that the answer scores a cut answer as a
complete one. This check reads a streamed chat completion (``[DONE]`` last) or Responses stream
(``response.completed`` last) chunk by chunk, as a client does, and names how the stream broke
and after how many chunks; a target that plays a broken stream must fail it in exactly that way
(the ``invalid_*`` fixtures), a healthy stream passes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import httpx

from evaljig_corpus._checks import Checker
from evaljig_corpus._conformance.shared import check_head, request_body
from evaljig_corpus._transport import DEFAULT_TIMEOUT, Target, client_for, reject

DONE = "[DONE]"
#: The events that end a Responses stream (its ``[DONE]``).
RESPONSE_ENDS = ("response.completed", "response.incomplete", "response.failed")
_EXCERPT = 120


def assert_broken_stream_conformance(
    target: Target,
    *,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None = None,
    input: str | Sequence[Mapping[str, Any]] | None = None,
    max_tokens: int | None = None,
    api: str = "chat",
    timeout: float = DEFAULT_TIMEOUT,
) -> list[dict[str, Any]]:
    """Stream an answer; every chunk must be JSON and the stream must reach its end; return the chunks.

    ``api``: ``"chat"`` (``messages``, ends with ``data: [DONE]``) or ``"responses"`` (``input``,
    ends with ``response.completed``; its chunks are called events).
    """
    check = Checker("broken_stream")
    if api == "chat":
        path, unit, end = "/chat/completions", "chunk", f"'data: {DONE}'"
        body = request_body(model=model, messages=messages, max_tokens=max_tokens, stream=True)
    elif api == "responses":
        path, unit, end = "/responses", "event", "'response.completed'"
        body = request_body(model=model, input=input, max_output_tokens=max_tokens, stream=True)
    else:
        raise TypeError(f"api must be 'chat' or 'responses', got {api!r}")
    chunks: list[dict[str, Any]] = []
    done = False
    with client_for(target, timeout) as client:
        try:
            with client.stream("POST", path, json=body) as response:
                if response.status_code >= 400:
                    response.read()
                    reject(check, response)
                for data in _events(response):
                    if done:
                        check.fail("stream", f"sent data after {end}")
                    if api == "chat" and data == DONE:
                        done = True
                        continue
                    chunks.append(_chunk(check, data, len(chunks), api))
                    done = api == "responses" and chunks[-1].get("type") in RESPONSE_ENDS
        except httpx.TransportError as exc:
            if not chunks and not done:
                check.fail("request", f"POST {path} failed before a {unit} arrived: {type(exc).__name__}: {exc}")
            closed = f"connection closed after {len(chunks)} {unit}(s), before {end}"
            check.fail("stream", f"{closed} ({type(exc).__name__})")
    if not done:
        check.fail("stream", f"ended after {len(chunks)} {unit}(s) without {end}: the answer is cut")
    if not chunks:
        check.fail("stream", f"must carry at least one chunk before {end}")
    return chunks


def _events(response: httpx.Response) -> Iterator[str]:
    """The ``data:`` payloads of the event stream as they arrive (a blank line ends an event)."""
    data: list[str] = []
    for line in response.iter_lines():
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            yield "\n".join(data)
            data = []
    if data:
        yield "\n".join(data)


def _chunk(check: Checker, data: str, k: int, api: str) -> dict[str, Any]:
    """Chunk ``k`` (0-based), a JSON object: a chat chunk with its head, or a Responses event with its type."""
    where = f"events[{k}]"
    try:
        chunk = check.obj(json.loads(data), where)
    except (ValueError, RecursionError) as exc:
        check.fail(where, f"is not valid JSON ({exc}), after {k} good chunk(s): {data[:_EXCERPT]!r}")
    if api == "chat":
        check_head(check, chunk, "chat.completion.chunk", where)
    else:
        check.string(chunk.get("type"), f"{where}.type", non_empty=True)
    return chunk
