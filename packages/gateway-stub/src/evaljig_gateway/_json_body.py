"""Request bodies as JSON: orjson parses them; a large one has its syntax checked in steps first.

orjson holds the event loop for the whole of a parse, and for a multi-megabyte body that is
milliseconds even when the body is broken at its first byte (3 MiB of ``{xxx...``: ~2 ms,
mostly allocation). A body over ``LARGE_BODY_BYTES`` is first read by yajl (ijson's C
backend) ``SCAN_STEP_BYTES`` at a time, as step-wise ``Work``: a malformed one is refused as
soon as yajl finds the error, without holding the loop; a well-formed one is then parsed by
orjson, which stays the only parser whose result the gateway uses (so both paths accept and
refuse exactly what orjson does, bar the range errors below, which are left to orjson).
"""

from __future__ import annotations

from typing import Any

import ijson
import orjson

from evaljig_gateway._errors import GatewayError
from evaljig_gateway._work import Work

#: Bodies larger than this are syntax-checked in steps before orjson parses them.
LARGE_BODY_BYTES = 256 * 1024
#: Bytes yajl reads per step (well under a millisecond for any JSON).
SCAN_STEP_BYTES = 16 * 1024
#: yajl errors that are about a number's range, not syntax: orjson reads some of them (a 30-digit integer).
_RANGE_ERRORS = ("overflow",)


def parse_json(raw: bytes) -> Any:
    """The body as JSON, or a 400 ``invalid_json`` naming orjson's complaint."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise invalid_json(str(exc)) from None


def parse_json_work(raw: bytes, check_above: int = LARGE_BODY_BYTES) -> Work[Any]:
    """``parse_json``, with the syntax of a body over ``check_above`` bytes checked a step at a time first."""
    if len(raw) > check_above:
        yield from _syntax_check_work(raw)
    return parse_json(raw)


def _syntax_check_work(raw: bytes) -> Work[None]:
    events = ijson.sendable_list()
    scanner = ijson.basic_parse_coro(events)
    view = memoryview(raw)
    try:
        for start in range(0, len(raw), SCAN_STEP_BYTES):
            scanner.send(view[start : start + SCAN_STEP_BYTES])
            events.clear()  # only whether the text is well-formed matters here
            yield
        scanner.close()
    except ijson.JSONError as exc:
        reason = _first_line(exc)
        if not any(word in reason for word in _RANGE_ERRORS):
            raise invalid_json(reason) from None


def _first_line(exc: Exception) -> str:
    detail = exc.args[0] if exc.args else ""
    text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__


def invalid_json(reason: str) -> GatewayError:
    return GatewayError(400, f"The request body is not valid JSON: {reason}", code="invalid_json")
