"""HTTP to a target: a base URL or a configured ``httpx.Client``; failures become ``ConformanceError``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import httpx

from evaljig_corpus._checks import Checker

#: A base URL such as ``http://127.0.0.1:8000/v1``, or a client with ``base_url`` and auth headers set.
Target = str | httpx.Client
DEFAULT_TIMEOUT = 30.0
_EXCERPT = 300


def configured_client(base_url: str, api_key: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> httpx.Client:
    """A client for ``base_url`` sending ``Authorization: Bearer <api_key>`` when a key is given."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.Client(base_url=base_url, headers=headers, timeout=timeout)


@contextmanager
def client_for(target: Target, timeout: float = DEFAULT_TIMEOUT) -> Iterator[httpx.Client]:
    """Use a caller's client as is (it owns auth and lifetime); open and close one for a URL."""
    if isinstance(target, httpx.Client):
        yield target
        return
    if not isinstance(target, str) or not target.startswith(("http://", "https://")):
        raise TypeError(f"target must be an http(s) base URL or an httpx.Client, got {target!r}")
    with configured_client(target, timeout=timeout) as client:
        yield client


def _send(check: Checker, client: httpx.Client, method: str, path: str, body: Any) -> httpx.Response:
    try:
        response = client.request(method, path, json=body)
    except httpx.HTTPError as exc:
        check.fail("request", f"{method} {path} failed before a response arrived: {type(exc).__name__}: {exc}")
    return answered(check, response, method, path)


def answered(check: Checker, response: httpx.Response, method: str, path: str) -> httpx.Response:
    """``response`` if it is a 200; an error answer becomes a ConformanceError (see ``reject``)."""
    if response.status_code >= 400:
        reject(check, response)
    if response.status_code != 200:
        check.fail("response", f"HTTP {response.status_code} from {method} {path}, expected 200")
    return response


def reject(check: Checker, response: httpx.Response) -> NoReturn:
    """Turn an error answer into a ConformanceError naming OpenAI's ``param`` when the target gives one."""
    message, param = response.text[:_EXCERPT], None
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError, RecursionError):
        error = None
    if isinstance(error, dict):
        message = str(error.get("message", message))
        param = error.get("param") if isinstance(error.get("param"), str) else None
    elif isinstance(error, str):
        message = error
    where = f" (param '{param}')" if param else ""
    status = response.status_code
    verdict = "rejected the request" if status < 500 else "failed"
    reason = f"target {verdict} with HTTP {status}{where}: {message}"
    check.fail(param or ("request" if status < 500 else "response"), reason, status=status)


def json_body(check: Checker, response: httpx.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than Python's parser goes
        check.fail("response", f"body is not valid JSON ({exc}): {response.text[:_EXCERPT]!r}")
    return check.obj(data, "response")


def get_json(check: Checker, client: httpx.Client, path: str) -> dict[str, Any]:
    return json_body(check, _send(check, client, "GET", path, None))


def post_json(check: Checker, client: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    return json_body(check, _send(check, client, "POST", path, body))


def post_sse(check: Checker, client: httpx.Client, path: str, body: dict[str, Any]) -> list[str]:
    """The ``data:`` payloads of a server-sent-event stream, in order, checking its framing."""
    response = _send(check, client, "POST", path, body)
    content_type = response.headers.get("content-type", "")
    if not content_type.startswith("text/event-stream"):
        check.fail("content-type", f"must be text/event-stream, got {content_type!r}")
    text = response.text.replace("\r\n", "\n")
    if not text.endswith("\n\n"):
        check.fail("stream", "must end with a blank line after its last event")
    events: list[str] = []
    for block in text.split("\n\n"):
        data = [line[5:].removeprefix(" ") for line in block.split("\n") if line.startswith("data:")]
        if data:
            events.append("\n".join(data))
    return events


def parse_event(check: Checker, data: str, field: str) -> dict[str, Any]:
    try:
        return check.obj(json.loads(data), field)
    except (ValueError, RecursionError) as exc:
        check.fail(field, f"is not valid JSON ({exc}): {data[:_EXCERPT]!r}")
