"""Streams that break on the way (``broken_stream``): cut before ``[DONE]``, a closed connection, a chunk not JSON.

A client that joins the deltas it got and calls that the answer scores a cut answer as a
complete one. This check reads a streamed chat completion chunk by chunk, as a client does, and
names how the stream broke and after how many chunks; a target that plays a broken stream must
fail it in exactly that way (the ``invalid_*`` fixtures), a healthy stream passes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from evaljig_corpus._checks import Checker
from evaljig_corpus._conformance.shared import check_head, request_body
from evaljig_corpus._transport import DEFAULT_TIMEOUT, Target, client_for, reject

PATH = "/chat/completions"
DONE = "[DONE]"
_EXCERPT = 120


def assert_broken_stream_conformance(
    target: Target,
    *,
    model: str,
    messages: Sequence[Mapping[str, Any]] | None = None,
    max_tokens: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> list[dict[str, Any]]:
    """Stream a chat completion; every chunk must be JSON and the stream must end with ``[DONE]``; return the chunks."""
    check = Checker("broken_stream")
    body = request_body(model=model, messages=messages, max_tokens=max_tokens, stream=True)
    chunks: list[dict[str, Any]] = []
    done = False
    with client_for(target, timeout) as client:
        try:
            with client.stream("POST", PATH, json=body) as response:
                if response.status_code >= 400:
                    response.read()
                    reject(check, response)
                for data in _events(response):
                    if done:
                        check.fail("stream", f"sent data after 'data: {DONE}'")
                    if data == DONE:
                        done = True
                        continue
                    chunks.append(_chunk(check, data, len(chunks)))
        except httpx.TransportError as exc:
            if not chunks and not done:
                check.fail("request", f"POST {PATH} failed before a chunk arrived: {type(exc).__name__}: {exc}")
            check.fail(
                "stream",
                f"connection closed after {len(chunks)} chunk(s), before 'data: {DONE}' ({type(exc).__name__})",
            )
    if not done:
        check.fail("stream", f"ended after {len(chunks)} chunk(s) without 'data: {DONE}': the answer is cut")
    if not chunks:
        check.fail("stream", f"must carry at least one chunk before 'data: {DONE}'")
    return chunks


def _events(response: httpx.Response) -> Any:
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


def _chunk(check: Checker, data: str, k: int) -> dict[str, Any]:
    """Chunk ``k`` (0-based), which must be a JSON object with a chunk's head."""
    where = f"events[{k}]"
    try:
        chunk = check.obj(json.loads(data), where)
    except (ValueError, RecursionError) as exc:
        check.fail(where, f"is not valid JSON ({exc}), after {k} good chunk(s): {data[:_EXCERPT]!r}")
    check_head(check, chunk, "chat.completion.chunk", where)
    return chunk
