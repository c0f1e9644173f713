"""A cassette miss: found structurally (by field path and value), explained by field, cheap, and journaled.

The explanation is what a failing LEV case shows first, so it must name the field that changed
(``temperature: 0 -> 0.3``) and never call a real difference "100% alike".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from evaljig_gateway import Exchange, Gateway, Replay, write_cassette
from evaljig_gateway._cassette import match_key, pretty_json
from evaljig_gateway._replay import Replayer

JSON_HEADERS = (("content-type", "application/json"),)
PATH = "/v1/chat/completions"
PROMPT = "Which planet is largest?\n" + "context " * 400  # a 3.6 KB prompt, as the probe sent


def _request(content: str = PROMPT, temperature: float = 0, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-x", "messages": [{"role": "user", "content": content}], "temperature": temperature, **extra}


def _exchange(request: dict[str, Any], answer: str = "B") -> Exchange:
    body = pretty_json({"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-x",
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": answer}}]})  # fmt: skip
    return Exchange("POST", PATH, pretty_json(request), 200, JSON_HEADERS, body, "OK")


def _message(replayer: Replayer, request: dict[str, Any]) -> str:
    return replayer.miss(match_key("POST", PATH, request)).message


def test_the_miss_names_the_changed_field_and_is_never_100_percent_alike() -> None:
    recorded = [_exchange(_request(f"other question {i}")) for i in range(5)] + [_exchange(_request())]
    message = _message(Replayer(recorded), _request(temperature=0.3))
    first = message.splitlines()[0]
    assert "interactions[5]" in first  # the closest recording, by its place in the cassette
    assert "temperature: 0 -> 0.3" in first
    assert "100%" not in message
    assert "3 of 4 fields alike" in first


def test_added_removed_and_nested_fields_are_named_by_path() -> None:
    recorded = [_exchange(_request(seed=1))]
    wanted = _request(content=PROMPT.replace("largest", "smallest"), max_tokens=5)
    lines = _message(Replayer(recorded), wanted).splitlines()
    assert any(line.strip().startswith("messages[0].content: ") and "largest" in line and "smallest" in line
               for line in lines)  # fmt: skip
    assert any(line.strip() == "seed: 1 -> (absent)" for line in lines)
    assert any(line.strip() == "max_tokens: (absent) -> 5" for line in lines)
    assert all(len(line) <= 300 for line in lines)  # long values are cut around the difference


def test_the_miss_search_finds_the_closest_of_a_big_cassette() -> None:
    """Against 20,000 recordings the search (run in a worker thread by the app) still finds the recording
    that differs in one field."""
    recorded = [_exchange(_request(f"question number {i}")) for i in range(20_000)]
    replayer = Replayer(recorded)
    error = replayer.miss(match_key("POST", PATH, _request("question number 12345", temperature=0.3)))
    assert "interactions[12345]" in error.message.splitlines()[0]
    assert "temperature: 0 -> 0.3" in error.message.splitlines()[0]


def test_a_miss_is_journaled_with_its_explanation_first_in_the_404(tmp_path: Path) -> None:
    cassette = tmp_path / "c.yaml"
    write_cassette(cassette, [_exchange(_request())])
    with Gateway(tape=Replay(cassette)) as gw:
        answer = httpx.post(f"{gw.base_url}/chat/completions", json=_request(temperature=0.3))
        assert answer.status_code == 404
        message = answer.json()["error"]["message"]
        assert message.startswith("Cassette miss: ")
        assert "temperature: 0 -> 0.3" in message.splitlines()[0]
        [call] = gw.calls()
        assert call.miss is not None
        assert call.miss == message
        assert call.as_dict()["miss"] == message
        journal = httpx.get(f"{gw.url}/_gateway/calls").json()["calls"]
        assert journal[0]["miss"] == message
        httpx.post(f"{gw.base_url}/chat/completions", json=_request())
        assert "miss" not in gw.calls()[-1].as_dict()  # a hit carries nothing new


@pytest.mark.parametrize("body", [None, {"model": "gpt-x", "input": "a"}])
def test_a_miss_on_a_path_never_recorded_says_so(body: dict[str, Any] | None) -> None:
    replayer = Replayer([_exchange(_request())])
    message = replayer.miss(match_key("POST", "/v1/embeddings", body)).message
    assert message.startswith("Cassette miss: nothing was recorded for POST /v1/embeddings")


def test_json_paths_quote_keys_that_are_not_names() -> None:
    recorded = [_exchange({"model": "gpt-x", "extra": {"a.b": 1, "c": [1, 2]}})]
    message = _message(Replayer(recorded), {"model": "gpt-x", "extra": {"a.b": 2, "c": [1, 2]}})
    assert 'extra["a.b"]: 1 -> 2' in message.splitlines()[0]
