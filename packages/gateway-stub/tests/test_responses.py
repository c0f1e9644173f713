"""The Responses API through the real openai SDK: function tools, ``text.format`` and streaming."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pydantic
import pytest
from openai.types.responses import Response, ResponseStreamEvent

from evaljig_gateway import Gateway

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city", "unit"],
        "additionalProperties": False,
    },
}
TIME = {
    "type": "function",
    "name": "get_time",
    "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]},
}
ASK = "What is the weather in Paris?"


class City(pydantic.BaseModel):
    name: str
    population: int
    capital: bool


def test_a_function_tool_is_called(client: openai.OpenAI) -> None:
    response = client.responses.create(model="gpt-stub", input=ASK, tools=[WEATHER])  # type: ignore[list-item]
    [call] = response.output
    assert call.type == "function_call"
    assert call.name == "get_weather"
    assert call.call_id.startswith("call_")
    arguments = json.loads(call.arguments)
    assert set(arguments) == {"city", "unit"}
    assert arguments["unit"] in ("celsius", "fahrenheit")


def test_the_tool_named_in_the_last_user_message_is_called(client: openai.OpenAI) -> None:
    response = client.responses.create(
        model="gpt-stub",
        input="Use get_time for the zone Europe/Paris.",
        tools=[WEATHER, TIME],  # type: ignore[list-item]
    )
    assert response.output[0].type == "function_call"
    assert response.output[0].name == "get_time"


def test_a_tool_result_is_answered_with_text(client: openai.OpenAI) -> None:
    first = client.responses.create(model="gpt-stub", input=ASK, tools=[WEATHER])  # type: ignore[list-item]
    call = first.output[0]
    assert call.type == "function_call"
    history: list[Any] = [
        {"role": "user", "content": ASK},
        call.model_dump(exclude_none=True),
        {"type": "function_call_output", "call_id": call.call_id, "output": '{"temperature": 21}'},
    ]
    second = client.responses.create(model="gpt-stub", input=history, tools=[WEATHER])  # type: ignore[list-item]
    assert second.output[0].type == "message"
    assert second.output_text


@pytest.mark.parametrize(("choice", "calls"), [("none", False), ("required", True)])
def test_tool_choice_is_honoured_after_a_tool_result(client: openai.OpenAI, choice: str, calls: bool) -> None:
    history: list[Any] = [
        {"role": "user", "content": ASK},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
    ]
    response = client.responses.create(
        model="gpt-stub",
        input=history,
        tools=[WEATHER],  # type: ignore[list-item]
        tool_choice=choice,  # type: ignore[arg-type]
    )
    assert (response.output[0].type == "function_call") is calls


def test_parse_with_a_pydantic_text_format(client: openai.OpenAI) -> None:
    parsed = client.responses.parse(model="gpt-stub", input="Describe Paris.", text_format=City)
    assert isinstance(parsed.output_parsed, City)


def test_an_answer_key_gives_the_json(gateway: Gateway, client: openai.OpenAI) -> None:
    gateway.set_answers({"Describe Paris.": '{"name": "Paris", "population": 2100000, "capital": true}'})
    parsed = client.responses.parse(model="gpt-stub", input="Describe Paris.", text_format=City)
    assert parsed.output_parsed == City(name="Paris", population=2_100_000, capital=True)


def test_json_object_format_answers_an_object(client: openai.OpenAI) -> None:
    response = client.responses.create(model="gpt-stub", input="hi", text={"format": {"type": "json_object"}})
    assert isinstance(json.loads(response.output_text), dict)


def test_streamed_text_follows_openais_event_sequence(client: openai.OpenAI) -> None:
    with client.responses.stream(model="gpt-stub", input="Say hi") as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [e.type for e in events]
    deltas = kinds.count("response.output_text.delta")
    assert deltas >= 2
    assert kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * deltas,
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == final.output_text
    assert final.output_text == client.responses.create(model="gpt-stub", input="Say hi").output_text


def test_a_streamed_function_call_sends_its_arguments(client: openai.OpenAI) -> None:
    stream = client.responses.create(model="gpt-stub", input=ASK, tools=[WEATHER], stream=True)  # type: ignore[list-item]
    events = list(stream)
    kinds = [e.type for e in events]
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert kinds[-3:] == ["response.function_call_arguments.done", "response.output_item.done", "response.completed"]
    deltas = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    done = next(e for e in events if e.type == "response.function_call_arguments.done")
    assert deltas == done.arguments
    assert set(json.loads(done.arguments)) == {"city", "unit"}


def test_the_stream_is_sse_with_event_lines(http: httpx.Client) -> None:
    response = http.post("/v1/responses", json={"model": "gpt-stub", "input": "Say hi", "stream": True})
    assert response.headers["content-type"].startswith("text/event-stream")
    blocks = [b for b in response.text.split("\n\n") if b]
    for block in blocks:
        event, data = block.split("\n")
        assert event.removeprefix("event: ") == json.loads(data.removeprefix("data: "))["type"]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"input": [{"type": "bogus"}]}, "input[0].type"),
        ({"input": [{"type": "function_call_output", "output": "x"}]}, "input[0].call_id"),
        ({"input": "hi", "tools": [{"type": "function"}]}, "tools[0].name"),
        ({"input": "hi", "tools": [WEATHER], "tool_choice": {"type": "function", "name": "nope"}}, "tool_choice"),
        ({"input": "hi", "text": {"format": {"type": "yaml"}}}, "text.format.type"),
        ({"input": "hi", "text": {"format": {"type": "json_schema", "name": "x"}}}, "text.format.schema"),
    ],
)
def test_bad_responses_requests_are_400_naming_the_field(http: httpx.Client, body: dict[str, Any], param: str) -> None:
    response = http.post("/v1/responses", json={"model": "gpt-stub", **body})
    assert response.status_code == 400
    assert response.json()["error"]["param"] == param


@pytest.mark.parametrize("tools", [[], [WEATHER]])
def test_every_body_and_event_validates_against_the_sdks_types(http: httpx.Client, tools: list[Any]) -> None:
    """The SDK builds its objects without validation; validating them strictly catches a wrong field."""
    body = {"model": "gpt-stub", "input": ASK, "tools": tools}
    Response.model_validate(http.post("/v1/responses", json=body).json(), strict=True)
    streamed = http.post("/v1/responses", json={**body, "stream": True}).text
    adapter = pydantic.TypeAdapter(ResponseStreamEvent)
    for block in filter(None, streamed.split("\n\n")):
        adapter.validate_python(json.loads(block.split("\ndata: ", 1)[1]), strict=True)
